import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const TRACES = 30;

/** The model: a function that takes a moment per prompt, its version in its answers. */
const model = (version: string) => `import time

def helper(x):
    return x

def answer(prompt, context):
    time.sleep(0.15)
    return "${version} " + context["traceId"]
`;

describe('your own code as the target, in the editor: pick, edit and save, rerun, compare', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Own code bench';
  const folder = join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, '.eval-runner-test');
  const file = join(folder, 'model.py');
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;
  const session = () => api.ctx.registry.session(ref());
  const answers = () => [...session().store.traces.values()].map((t) => t.answer ?? '');

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: TRACES });
    mkdirSync(folder, { recursive: true });
    writeFileSync(file, model('v1'));
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('concurrency', 2, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const key of ['target', 'baseUrl', 'evaluations', 'concurrency']) await config().update(key, undefined, G);
    await sandbox.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('Select Target → Python function: a workspace file, then one of its top-level functions; stored with its full path', async () => {
    const offered: string[][] = [];
    const original = api.ctx.pickItem;
    api.ctx.pickItem = ((items: readonly vscode.QuickPickItem[]) => {
      offered.push(items.map((i) => i.label));
      return Promise.resolve(items.find((i) => i.label === 'Python function' || i.label.endsWith('model.py') || i.label === 'answer'));
    }) as typeof api.ctx.pickItem;
    try {
      await vscode.commands.executeCommand('evalRunner.selectTarget');
    } finally {
      api.ctx.pickItem = original;
    }
    assert.ok(offered[1]!.includes('.eval-runner-test/model.py'), offered[1]!.join(', '));
    assert.deepEqual(offered[2], ['answer', 'helper'], 'the file\'s top-level functions, answer first');
    await until('the setting is written', () => config().get<{ type: string }>('target')?.type === 'python');
    assert.deepEqual(config().get('target'), { type: 'python', file, function: 'answer' });
  });

  it('saving the file mid-run restarts the workers: the next answers come from the edit', async () => {
    const running = api.runs.run(ref());
    // Counted from the run's progress: the window reads the journal of a run it follows only while it shows its traces.
    await until('a few answers', () => {
      const c = session().lastProgress?.counts;
      return (c?.answered ?? 0) + (c?.submitted ?? 0) >= 4;
    });
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), model('v2'));
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(await doc.save());
    const summary = await running;
    assert.equal(summary?.outcome, 'completed', summary?.message);
    const all = answers();
    const v1 = all.filter((a) => a.startsWith('v1 ')).length;
    const v2 = all.filter((a) => a.startsWith('v2 ')).length;
    assert.equal(v1 + v2, TRACES);
    assert.ok(v1 >= 4 && v2 >= 4, `answers before the save: ${v1}, after: ${v2}`);
    assert.match(session().store.runs[0]!.target, /^python: model\.py:answer @ [0-9a-f]{6}$/);
  });

  it('Rerun Traces on the answers marked bad: a new run of those alone, and Compare Runs shows only them', async () => {
    const bad = [...session().store.traces.values()].filter((t) => t.answer?.startsWith('v1 ')).slice(0, 2).map((t) => t.traceId);
    assert.equal(bad.length, 2);
    for (const id of bad) await vscode.commands.executeCommand('evalRunner.markBad', ref().id, id);
    await until('two answers are marked bad', () => [...session().store.traces.values()].filter((t) => t.rating === 'bad').length === 2);
    const firstRun = session().store.runs[0]!.runId;
    const before = sandbox.stats.submissions;
    await vscode.commands.executeCommand('evalRunner.rerunTraces', ref().id, 'bad');
    const runs = session().store.runs;
    assert.equal(runs.length, 2, 'a new run, without the "another target" question');
    assert.equal(sandbox.stats.submissions - before, 2, 'only those two were submitted');
    for (const id of bad) assert.equal(sandbox.answerOf(1, id), `v2 ${id}`);
    const panel = api.compare.findRuns(ref().id, firstRun, runs[1]!.runId);
    assert.ok(panel, 'Compare Runs opened on the previous run and the rerun');
    assert.deepEqual([...panel.differing].sort(), [...bad].sort());
  });
});
