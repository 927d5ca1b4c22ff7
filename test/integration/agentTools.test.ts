import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { confirmationOf } from '../../src/extension/agentTools/agentToolCalls';
import type { TestHandles } from '../../src/extension/main';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import { liveRunner } from '../../src/protocol/runnerFiles';
import { listedEvaluation } from './listedEvaluation';
import type { ListedEvaluation } from './listedEvaluation';
import type { Sandbox } from '../../src/sandbox/server';
import { tempDir } from '../unit/helpers/runs';
import { until } from './until';

const CLI = join(__dirname, '..', '..', '..', 'dist', 'cli.js');

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
  let listed: ListedEvaluation;
  const refOf = (): EvaluationRef => listed.refOf();

  before(async () => {
    listed = await listedEvaluation('Agent tools', { target: { type: 'command', command: 'cat' } });
    ({ api, sandbox } = listed);
    await api.ctx.tokens.set(refOf().origin, sandbox.token);
  });
  after(async () => {
    await config().update('prices', undefined, G);
    await listed.close();
  });

  it("estimates a run as `run --estimate` does, and confirms start_run and rerun_traces with traces × estimated cost", async () => {
    // The sandbox's echo model reports usage; evalRunner.prices prices it (no price list knows it).
    const openai = { type: 'openai', baseUrl: `${sandbox.baseUrl}/v1`, model: 'sandbox-echo' };
    await config().update('target', openai, G);
    await config().update('prices', { 'sandbox-echo': { input: 2, output: 8 } }, G);
    await api.ctx.tokens.markKeyless(refOf().origin);
    try {
      const estimate = await invoke('estimate_run', {});
      assert.equal(sandbox.stats.submissions + sandbox.stats.modelCalls, 0, 'an estimate calls no model and submits nothing');
      // The CLI's estimate of the same evaluation, target and prices, in a state folder of its own: the same figures.
      const args = ['run', '--estimate', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', tempDir(), '--target', 'openai', '--openai-base-url', openai.baseUrl, '--model', openai.model, '--price-in', '2', '--price-out', '8'];
      const cli = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', EVAL_RUNNER_TOKEN: sandbox.token } }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))),
      );
      const figures = (text: string) => text.split('\n').slice(1).filter((l) => l && !l.startsWith('Cost:')).join('\n');
      assert.match(estimate, /^Traces to call: 25\nInput tokens: [\d,]+\nOutput tokens: [\d,]+–[\d,]+\nCost: \$[\d.]+–\$[\d.]+ \(prices: /m);
      assert.equal(figures(estimate), figures(cli.trim()), `the tool's figures are the CLI's:\n${estimate}\n---\n${cli}`);
      assert.equal(/^Cost: (\S+)/m.exec(estimate)![1], /^Cost: (\S+)/m.exec(cli)![1], 'and its cost range');

      const none = new vscode.CancellationTokenSource().token;
      const range = /^Cost: (\S+)/m.exec(estimate)![1]!;
      const start = await confirmationOf(api.ctx, api.runs, 'evalRunner_start_run', {}, none);
      assert.match(start!.message, new RegExp(`^Run benchmark evaluation 1 with the openai target \\(mode continue\\): 25 traces to call × an estimated ${range.replace(/[$.]/g, '\\$&')} in all \\(`));
      const rerun = await confirmationOf(api.ctx, api.runs, 'evalRunner_rerun_traces', { traceIds: ['no-such-trace'] }, none);
      assert.match(rerun!.message, /^Rerun 1 chosen traces of benchmark evaluation 1 .*no estimate: no trace of the evaluation is among those asked for\)/);
      // A chat that cancels gets its confirmation at once, traces only, with the reason.
      const cancelled = new vscode.CancellationTokenSource();
      cancelled.cancel();
      assert.match((await confirmationOf(api.ctx, api.runs, 'evalRunner_start_run', { mode: 'fresh' }, cancelled.token))!.message, /\(mode fresh\): \d+ traces journaled, 0 submitted; no estimate: cancelled\./);
    } finally {
      await config().update('target', { type: 'command', command: 'cat' }, G);
      await config().update('prices', undefined, G);
    }
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
