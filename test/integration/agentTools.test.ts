import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import { liveRunner } from '../../src/protocol/runnerFiles';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

/** The text of a tool's result, as a chat model reads it. */
function textOf(result: vscode.LanguageModelToolResult): string {
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

const invoke = async (name: string, input: object) => textOf(await vscode.lm.invokeTool(`evalRunner_${name}`, { input, toolInvocationToken: undefined }));

// Issue 39: the agents' tools as language-model tools, invoked in the real extension host as an agent would.
describe("the agents' tools in the editor (vscode.lm)", () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const label = 'Agent tools';
  const refOf = (): EvaluationRef => api.ctx.registry.refs.find((r) => r.label === label)!;

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label }], G);
    await config().update('target', { type: 'command', command: 'cat' }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === label));
    await api.ctx.tokens.set(refOf().origin, sandbox.token);
  });
  after(async () => {
    for (const key of ['baseUrl', 'evaluations', 'target']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('lists every tool, starts a run the window follows, and reads its status and listing', async () => {
    const names = vscode.lm.tools.map((t) => t.name).filter((n) => n.startsWith('evalRunner_'));
    assert.ok(names.includes('evalRunner_list_evaluations') && names.includes('evalRunner_start_run'), names.join(', '));

    // The window's one evaluation is the default: no id needed; the window's token and target, never the agent's.
    assert.match(await invoke('start_run', {}), /^Started a run of benchmark evaluation 1 with command, in its own process \(pid \d+\)/);
    const session = api.ctx.registry.session(refOf());
    await until('the run ends, every trace submitted', () => !session.isRunning && session.store.counts.submitted === 25, 60_000);
    assert.equal(sandbox.stats.submissions, 25);
    // The runner says it is there until its process ends, a moment after the run's end.
    await until('the runner process has ended', () => liveRunner(session.journalFile) === undefined, 30_000);

    const origin = refOf().key.origin;
    assert.match(await invoke('list_evaluations', {}), new RegExp(`^benchmark 1 at ${origin.replace(/[.]/g, '\\.')}: 25 trace\\(s\\), 25 submitted, 0 failed; last run \\S+ completed`, 'm'));
    assert.equal((await invoke('get_run_status', {})).split('\n').slice(0, 2).join('\n'), `benchmark 1 at ${origin}: no run is going on.\n25 trace(s): 25 submitted, 0 answered, 0 failed, 0 skipped, 0 to do.`);
    // A mistake reaches the model as the tool's error, in words naming the next step.
    await assert.rejects(invoke('get_run_status', { evaluationId: 99, kind: 'benchmark' }), /Nothing is journaled for benchmark evaluation 99 .*list_evaluations/);
  });
});
