import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

// Run twice by test/harness/runIntegration.mjs: the untrusted cases in a workbench of their own with workspace trust
// on (its folder, a fresh "cloned repository", opens in Restricted Mode); the trusted case with the rest of the suite.

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const TRACES = 3;

/** A Python module that marks a file when it is imported, and answers with its working folder. */
const agent = (marker: string) => `import os
open(${JSON.stringify(marker)}, "w").write("imported")

def answer(prompt, context):
    return os.getcwd()
`;

/** A worker that marks a file when it starts. */
const worker = (marker: string) => `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'started');\n`;

function bench(label: string) {
  const state = { api: undefined as unknown as TestHandles, sandbox: undefined as unknown as Sandbox };
  before(async () => {
    state.api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    state.sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: TRACES });
    await config().update('baseUrl', state.sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label }], G);
    await config().update('concurrency', 2, G);
    await until('the evaluation is listed', () => state.api.ctx.registry.refs.some((r) => r.label === label));
    await state.api.ctx.tokens.set(new URL(state.sandbox.baseUrl).origin, state.sandbox.token);
  });
  after(async () => {
    for (const key of ['target', 'baseUrl', 'evaluations', 'concurrency']) await config().update(key, undefined, G);
    await state.sandbox.close();
  });
  return state;
}

if (!vscode.workspace.isTrusted) {
  describe('Restricted Mode: an untrusted workspace\'s own code never runs', function () {
    this.timeout(120_000);
    const LABEL = 'Restricted bench';
    const state = bench(LABEL);
    const ws = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const marks = realpathSync(mkdtempSync(join(tmpdir(), 'eval-runner-marks-')));
    const ref = () => state.api.ctx.registry.refs.find((r) => r.label === LABEL)!;
    const refusals: string[] = [];
    let original: (message: string) => void;

    before(() => {
      original = state.api.ctx.refuseOwnCode;
      state.api.ctx.refuseOwnCode = (message) => refusals.push(message);
    });
    after(() => {
      state.api.ctx.refuseOwnCode = original;
      rmSync(marks, { recursive: true, force: true });
    });
    beforeEach(() => (refusals.length = 0));

    it('opens in Restricted Mode', () => {
      assert.equal(vscode.workspace.isTrusted, false);
    });

    it('Run with the repository\'s agent.py (relative, from before, or by its full path): refused in words, nothing imported', async () => {
      const marker = join(marks, 'agent-imported');
      writeFileSync(join(ws, 'agent.py'), agent(marker));
      for (const file of ['agent.py', join(ws, 'agent.py')]) {
        refusals.length = 0;
        await config().update('target', { type: 'python', file, function: 'answer' }, G);
        await until('the target is read', () => state.api.ctx.settings.target.type === 'python' && (state.api.ctx.settings.target as { file?: string }).file === file);
        const summary = await state.api.runs.run(ref());
        assert.equal(summary, undefined, 'the run did not start');
        assert.equal(refusals.length, 1, `one refusal for ${file}`);
        assert.match(refusals[0]!, /Restricted Mode/);
        assert.ok(refusals[0]!.includes(join(ws, 'agent.py')), refusals[0]);
        assert.ok(!existsSync(marker), 'agent.py was not imported');
      }
      assert.equal(state.api.ctx.registry.session(ref()).store.runs.length, 0, 'no run recorded, no identity made of the file');
      assert.equal(state.sandbox.stats.submissions, 0);
    });

    it('an interpreter in the workspace (its .venv) is not started, even for the user\'s own file', async () => {
      const marker = join(marks, 'venv-started');
      const venv = join(ws, '.venv', 'bin');
      mkdirSync(venv, { recursive: true });
      writeFileSync(join(venv, 'python'), `#!/bin/sh\ntouch ${JSON.stringify(marker)}\n`, { mode: 0o755 });
      const own = join(marks, 'own-for-venv', 'agent.py');
      mkdirSync(dirname(own));
      writeFileSync(own, agent(join(marks, 'own-for-venv-imported')));
      await config().update('target', { type: 'python', file: own, python: '.venv/bin/python' }, G);
      await until('the target is read', () => (state.api.ctx.settings.target as { python?: string }).python === '.venv/bin/python');
      assert.equal(await state.api.runs.run(ref()), undefined);
      assert.equal(refusals.length, 1);
      assert.ok(refusals[0]!.includes(join(venv, 'python')), refusals[0]);
      assert.ok(!existsSync(marker), 'the workspace\'s interpreter never started');
    });

    it('Rerun Traces and Debug Trace follow the same rule: a worker of the workspace does not start', async () => {
      const marker = join(marks, 'worker-started');
      writeFileSync(join(ws, 'worker.js'), worker(marker));
      await config().update('target', { type: 'worker', command: `node ${JSON.stringify(join(ws, 'worker.js'))}` }, G);
      await until('the target is read', () => state.api.ctx.settings.target.type === 'worker');
      await vscode.commands.executeCommand('evalRunner.fetchPrompts', ref().id);
      const session = state.api.ctx.registry.session(ref());
      await until('the prompts are fetched', () => session.store.traces.size === TRACES);
      const traceId = [...session.store.traces.keys()][0]!;
      await vscode.commands.executeCommand('evalRunner.debugTrace', ref().id, traceId);
      assert.equal(refusals.length, 1, 'Debug Trace is refused');
      await vscode.commands.executeCommand('evalRunner.rerunTraces', ref().id, { ids: [traceId] });
      assert.equal(refusals.length, 2, 'Rerun Traces is refused');
      assert.match(refusals[1]!, /worker\.js/);
      assert.ok(!existsSync(marker), 'the worker never started');
      assert.equal(session.store.runs.length, 0);
    });

    it('the user\'s own agent.py outside the workspace runs, and not in the workspace', async () => {
      const own = join(marks, 'mine', 'agent.py');
      mkdirSync(dirname(own));
      writeFileSync(own, agent(join(marks, 'mine-imported')));
      await config().update('target', { type: 'python', file: own, function: 'answer' }, G);
      await until('the target is read', () => (state.api.ctx.settings.target as { file?: string }).file === own);
      const summary = await state.api.runs.run(ref());
      assert.equal(summary?.outcome, 'completed', `${summary?.message ?? ''} ${refusals.join(' ')}`);
      const answers = [...state.api.ctx.registry.session(ref()).store.traces.values()].map((t) => t.answer);
      assert.deepEqual(new Set(answers), new Set([dirname(own)]), 'its working folder is its own folder');
    });
  });
}

if (vscode.workspace.isTrusted) {
  describe('Restricted Mode, its counterpart: a trusted workspace\'s relative agent.py still runs', () => {
    const LABEL = 'Trusted relative bench';
    const state = bench(LABEL);
    const ws = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const folder = join(ws, '.eval-runner-test-trusted');

    after(() => rmSync(folder, { recursive: true, force: true }));

    it('runs agent.py named relative to the workspace, in the workspace', async () => {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'agent.py'), agent(join(folder, 'imported')));
      await config().update('target', { type: 'python', file: '.eval-runner-test-trusted/agent.py' }, G);
      await until('the target is read', () => state.api.ctx.settings.target.type === 'python');
      const summary = await state.api.runs.run(state.api.ctx.registry.refs.find((r) => r.label === LABEL)!);
      assert.equal(summary?.outcome, 'completed', summary?.message);
      assert.equal(summary?.counts.submitted, TRACES);
      assert.ok(existsSync(join(folder, 'imported')));
      const answers = [...state.api.ctx.registry.session(state.api.ctx.registry.refs.find((r) => r.label === LABEL)!).store.traces.values()].map((t) => t.answer);
      assert.deepEqual(new Set(answers), new Set([realpathSync(ws)]), 'in the workspace, as always');
    });
  });
}
