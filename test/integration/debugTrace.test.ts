import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { ReviewCodeLens, reviewUri } from '../../src/extension/review/review';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

/** A JavaScript worker speaking the worker protocol; BREAK_LINE (1-based) computes the answer. */
const WORKER = `const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const request = JSON.parse(line);
  const answer = 'debugged ' + request.traceId + ' (' + request.prompt.length + ' chars)';
  process.stdout.write(JSON.stringify({ id: request.id, answer }) + '\\n');
});
`;
const BREAK_LINE = 4;

interface Stop {
  session: vscode.DebugSession;
  threadId: number;
}

describe('Debug Trace: a JavaScript worker under the built-in debugger, stopping at a breakpoint', function () {
  // A debug adapter, a shim and a worker start on a loaded machine: more than mocha's minute is allowed.
  this.timeout(180_000);
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Debug bench';
  const folder = join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, '.eval-runner-test-debug');
  const worker = join(folder, 'worker.js');
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;
  const stops: Stop[] = [];
  const disposables: vscode.Disposable[] = [];

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 3 });
    mkdirSync(folder, { recursive: true });
    writeFileSync(worker, WORKER);
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'worker', command: `node ${JSON.stringify(worker)}` }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
    // Every debug session's 'stopped' events, as the debug adapter sends them.
    disposables.push(
      vscode.debug.registerDebugAdapterTrackerFactory('*', {
        createDebugAdapterTracker: (session) => ({
          onDidSendMessage: (m: { type?: string; event?: string; body?: { threadId?: number } }) => {
            if (m.type === 'event' && m.event === 'stopped' && typeof m.body?.threadId === 'number') stops.push({ session, threadId: m.body.threadId });
          },
        }),
      }),
    );
  });
  after(async () => {
    for (const d of disposables) d.dispose();
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const key of ['target', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("stops at the worker's breakpoint with the trace's prompt, and the answer opens in the review editor, unsaved", async () => {
    await vscode.commands.executeCommand('evalRunner.fetchPrompts', ref().id);
    const session = api.ctx.registry.session(ref());
    await until('the prompts are here', () => session.store.traces.size === 3);
    const trace = [...session.store.traces.values()][1]!;
    const journaled = trace.answer;
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.file(worker), new vscode.Position(BREAK_LINE - 1, 0)))]);

    const debugging = vscode.commands.executeCommand('evalRunner.debugTrace', ref().id, trace.traceId);
    await until('the debugger stops', () => stops.length > 0, 150_000);
    const stop = stops[0]!;
    const frames = (await stop.session.customRequest('stackTrace', { threadId: stop.threadId, levels: 1 })) as { stackFrames: Array<{ id: number; line: number; source?: { path?: string } }> };
    const top = frames.stackFrames[0]!;
    // In a remote extension host (code-server) the debugger names the file by its remote URI.
    const path = top.source?.path ?? '';
    assert.equal(/^[a-z-]+:\/\//.test(path) ? vscode.Uri.parse(path).path : path, worker, 'stopped in the worker file');
    assert.equal(top.line, BREAK_LINE, "stopped at the breakpoint's line");
    // The prompt the worker was given is the trace's: read from the stopped frame.
    const frameId = top.id;
    const same = (await stop.session.customRequest('evaluate', { expression: `request.prompt === ${JSON.stringify(trace.prompt)}`, frameId, context: 'repl' })) as { result: string };
    assert.equal(same.result, 'true');
    await stop.session.customRequest('continue', { threadId: stop.threadId });
    await debugging;

    const expected = `debugged ${trace.traceId} (${trace.prompt!.length} chars)`;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === reviewUri(ref(), trace.traceId, 'answer').toString());
    assert.ok(doc, 'the review editor of the trace is open');
    assert.equal(doc.getText(), expected);
    assert.ok(doc.isDirty, 'not saved: to submit or to discard');
    assert.equal(session.store.get(trace.traceId)?.answer, journaled, 'the journal is unchanged until the user chooses');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), doc.uri.toString());
    // js-debug ends the worker's child session a moment after the parent's end resolves the debugging promise.
    await until('the debug session has ended', () => vscode.debug.activeDebugSession === undefined);
    const lenses = new ReviewCodeLens(api.ctx).provideCodeLenses(doc).map((l) => l.command?.command);
    assert.ok(lenses.includes('evalRunner.debugTrace'), 'the review editor offers Debug Trace again');
  });
});
