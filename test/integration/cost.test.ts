import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { costText, runCost } from '../../src/core';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const TRACES = 6;

// Issue 38: an editor run is priced by its runner from evalRunner.prices (the sandbox's echo model reports usage and no
// price list knows it), shown in Run Details, the status bar and Compare Runs; a costly run asks first.
describe('cost in the editor: Run Details, the status bar, Compare Runs, and the estimate asked for', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Priced run';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;
  const session = () => api.ctx.registry.session(ref());
  let originalPick: TestHandles['ctx']['pickItem'];
  const asked: string[] = [];
  const answer = (go: boolean) => {
    api.ctx.pickItem = (<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions) => {
      asked.push(`${options.title ?? ''} | ${items.map((i) => `${i.label}${i.detail ? ` (${i.detail})` : ''}`).join(' | ')}`);
      return Promise.resolve(go ? items[0] : items[1]);
    });
  };

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    originalPick = api.ctx.pickItem;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: TRACES });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'openai', baseUrl: `${sandbox.baseUrl}/v1`, model: 'sandbox-echo' }, G);
    await config().update('prices', { 'sandbox-echo': { input: 2, output: 8 } }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
    await api.ctx.tokens.markKeyless(new URL(sandbox.baseUrl).origin);
  });
  after(async () => {
    api.ctx.pickItem = originalPick;
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const key of ['target', 'baseUrl', 'evaluations', 'prices', 'estimateThresholdUsd']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it("Run Details' summary, the status bar and Compare Runs show the run's cost from the model's usage at the user's prices", async () => {
    const summary = await api.runs.run(ref());
    assert.equal(summary?.outcome, 'completed', summary?.message);
    const run = session().store.runs[0]!;
    assert.deepEqual(run.price, { src: 'override', in: 2, out: 8 }, 'the run journaled its prices');
    const cost = runCost(run);
    assert.ok(cost.usd! > 0 && cost.inputTokens > 0, JSON.stringify(cost));
    assert.equal(api.runs.lastDrawn(ref().id)?.cost?.usd, cost.usd, 'the status bar drew the spend');

    await vscode.commands.executeCommand('evalRunner.showProgress', ref().id);
    const panel = () => api.panels.find(ref().id);
    await until("Run Details sent the run's cost", () => panel()?.lastProgress?.run?.cost === costText(cost));
    assert.match(panel()!.lastProgress!.run!.cost, /^\$0\.\d+ \([\d,]+ in, [\d,]+ out; prices: override\)$/);
    assert.doesNotMatch(panel()!.lastProgress!.run!.stats, /cost/, 'said once, on its own line');

    // A second run, unpriced (the echo target reports no usage): Compare Runs says so, never a guess.
    await config().update('target', { type: 'echo' }, G);
    const second = await api.runs.run(ref(), { mode: 'fresh' });
    assert.equal(second?.outcome, 'completed', second?.message);
    const [a, b] = session().runs;
    await api.compare.compare(ref(), a!, b!);
    const compare = api.compare.findRuns(ref().id, a!.runId, b!.runId)!;
    await until('Compare Runs sent its header', () => compare.lastHeader !== undefined);
    assert.equal(compare.lastHeader!.a.cost, costText(cost));
    assert.equal(compare.lastHeader!.b.cost, 'no cost: the target reported no token usage');
    await config().update('target', { type: 'openai', baseUrl: `${sandbox.baseUrl}/v1`, model: 'sandbox-echo' }, G);
  });

  it('Run asks first, showing the estimate, when it passes evalRunner.estimateThresholdUsd: declined, no call', async () => {
    await config().update('estimateThresholdUsd', 0, G);
    const calls = sandbox.stats.modelCalls;
    answer(false);
    const declined = await api.runs.run(ref(), { mode: 'fresh' });
    assert.equal(declined?.outcome, 'cancelled', declined?.message);
    assert.equal(sandbox.stats.modelCalls, calls, 'no target call');
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /^Priced run: this run is estimated at \$[\d.]+(–\$[\d.]+)?, over evalRunner\.estimateThresholdUsd \(\$0\.000000\)\. Run it\? \| Run \(Traces to call: 6 · Input tokens: [\d,]+ · .*Cost: \$[\d.]+.* \(prices: override\)/);
    answer(true);
    const confirmed = await api.runs.run(ref(), { mode: 'fresh' });
    assert.equal(confirmed?.outcome, 'completed', confirmed?.message);
    assert.equal(sandbox.stats.modelCalls, calls + TRACES);
    assert.equal(asked.length, 2);
  });
});
