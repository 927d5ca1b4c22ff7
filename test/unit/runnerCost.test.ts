import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EvaluationSession, runCost } from '../../src/core';
import type { TargetSpec } from '../../src/core';
import { journalPath } from '../../src/core/journal/journal';
import { RemoteRun } from '../../src/extension/runs/runnerClient';
import type { RemoteRunEvents } from '../../src/extension/runs/runnerClient';
import type { ConfirmEstimateParams } from '../../src/protocol/runnerProtocol';
import type { StartParams } from '../../src/protocol/runnerProtocol';
import { seedPrompts } from '../../src/sandbox/seed';
import { wordCount } from '../../src/sandbox/echoModel';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { runnerStartParams, tempDir } from './helpers/runs';

const RUNNER = join(__dirname, '..', '..', '..', 'dist', 'runner.js');
const TRACES = 12;
// The sandbox's echo model: no price list knows it, so only evalRunner.prices prices it.
const MODEL = 'sandbox-echo';

describe("an editor run's cost: the window's evalRunner.prices and budgetUsd through the runner's start params", function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
  });
  afterEach(() => sandbox.close());

  /** Runs the evaluation in a real runner process, as a window starts it, with these cost settings. */
  async function runWith(cost: StartParams['cost'], confirmEstimate?: RemoteRunEvents['confirmEstimate']) {
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const params = runnerStartParams(sandbox, stateDir, key, { spec: openai(`${sandbox.baseUrl}/v1`), secrets: { apiKey: 'sk-test-never-logged' } }, { ...(cost ? { cost } : {}), run: { concurrency: 2 } });
    const logs: string[] = [];
    const run = await RemoteRun.start(RUNNER, journalPath(stateDir, key), params, {
      progress: () => undefined,
      log: (_level, message) => logs.push(message),
      needToken: () => Promise.resolve(undefined),
      ...(confirmEstimate ? { confirmEstimate } : {}),
    });
    const finished = await run.finished;
    run.detach();
    const session = new EvaluationSession(key, stateDir);
    await session.load();
    return { finished, runs: session.store.runs, logs, session };
  }

  /** An openai spec as the core declares it (the protocol carries a spec as its kind and the rest). */
  const openai = (baseUrl: string): TargetSpec => ({ type: 'openai', baseUrl, model: MODEL });
  const words = () => seedPrompts('benchmark', TRACES).reduce((a, p) => a + wordCount(p.content), 0);

  it("journals the run's prices from the table (source override) and its cost from the model's reported usage", async () => {
    const { finished, runs } = await runWith({ prices: { [MODEL]: { input: 2, output: 8 }, other: { input: 'free' } }, estimateThresholdUsd: 1 });
    assert.equal(finished?.outcome, 'completed', finished?.message);
    assert.deepEqual(runs[0]!.price, { src: 'override', in: 2, out: 8 });
    const cost = runCost(runs[0]!);
    assert.equal(cost.source, 'override');
    assert.ok(Math.abs(cost.usd! - (words() * 2 + words() * 8) / 1_000_000) < 1e-12, `${cost.usd}`);
  });

  it('holds the budget: a third of the whole cost stops the run as budget, within it', async () => {
    const whole = (words() * 2 + words() * 8) / 1_000_000;
    const { finished, runs } = await runWith({ prices: { [MODEL]: { input: 2, output: 8 } }, budgetUsd: whole / 3 });
    assert.equal(finished?.outcome, 'budget', finished?.message);
    assert.ok(runCost(runs[0]!).usd! <= whole / 3);
    assert.equal(sandbox.stats.modelCalls < TRACES, true, 'traces were left for later');
  });

  it('without a price, no cost and no budget: the run says the budget is not applied, never a guess', async () => {
    const { finished, runs, logs } = await runWith({ budgetUsd: 0.000001 });
    assert.equal(finished?.outcome, 'completed', finished?.message);
    assert.equal(runs[0]!.price, undefined);
    assert.match(runCost(runs[0]!).why ?? '', /no price is known/);
    assert.ok(logs.some((l) => /evalRunner\.budgetUsd is not applied to this run: no price is known for the model "sandbox-echo"/.test(l)), logs.join('\n'));
  });

  it('asks the window before a run whose estimate passes the threshold: declined, nothing is called; confirmed, it runs', async () => {
    const asked: ConfirmEstimateParams[] = [];
    const prices = { [MODEL]: { input: 2, output: 8 } };
    const declined = await runWith({ prices, estimateThresholdUsd: 0 }, (e) => (asked.push(e), Promise.resolve(false)));
    assert.equal(declined.finished?.outcome, 'cancelled');
    assert.match(declined.finished?.message ?? '', /its estimate was not confirmed/);
    assert.equal(sandbox.stats.modelCalls, 0, 'no target call');
    assert.equal(sandbox.stats.submissions, 0, 'no submission');
    assert.equal(asked.length, 1);
    assert.match(asked[0]!.text, new RegExp(`^Traces to call: ${TRACES}\nInput tokens: [\\d,]+\n.*\nCost: \\$[\\d.]+–\\$[\\d.]+ \\(prices: override\\)`));
    assert.ok(asked[0]!.usd.high > 0 && asked[0]!.thresholdUsd === 0);
    const confirmed = await runWith({ prices, estimateThresholdUsd: 0 }, () => Promise.resolve(true));
    assert.equal(confirmed.finished?.outcome, 'completed', confirmed.finished?.message);
    assert.equal(sandbox.stats.modelCalls, TRACES);
    // Under the threshold, nothing is asked.
    const below = await runWith({ prices, estimateThresholdUsd: 1 }, (e) => (asked.push(e), Promise.resolve(false)));
    assert.equal(below.finished?.outcome, 'completed');
    assert.equal(asked.length, 1);
  });
});
