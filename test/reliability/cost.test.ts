import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { wordCount } from '../../src/sandbox/echoModel';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

interface CostJson {
  usd: number | null;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  source: string | null;
}
interface StatusJson {
  counts: { submitted: number; pending: number };
  runs: Array<{ runId: string; cost: CostJson }>;
  cost: CostJson;
}

const TRACES = 30;
const MODEL = 'gpt-4o-mini';

/** What the price list says these tokens cost (its own calculation, not ours). */
function listUsd(input: number, cached: number, output: number): number {
  const priced = calcPrice({ input_tokens: input, cache_read_tokens: cached, output_tokens: output }, MODEL, { providerId: 'openai' });
  assert.ok(priced, `the price list prices ${MODEL}`);
  return priced.total_price;
}

const cents = (usd: number) => Math.round(usd * 100);

/** A model of the sandbox's that reports large usage (cached tokens among them) for every call, not streamed. */
function costlyModel(calls: { n: number }) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return false;
    req.resume();
    req.on('end', () => {
      calls.n++;
      const usage = { prompt_tokens: 100_000, completion_tokens: 20_000, total_tokens: 120_000, prompt_tokens_details: { cached_tokens: 30_000 } };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', model: MODEL, choices: [{ index: 0, message: { role: 'assistant', content: 'an answer' }, finish_reason: 'stop' }], usage }));
    });
    return true;
  };
}

function setUp(sandbox: Sandbox) {
  const stateDir = tempDir();
  const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  const run = [...svc, '--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', MODEL, '--concurrency', '4'];
  const env = { EVAL_RUNNER_TOKEN: sandbox.token, OPENAI_API_KEY: 'sk-test-never-logged' };
  const status = async () => JSON.parse((await cli(['status', ...svc, '--json'], env)).stdout) as StatusJson;
  return { run, env, status };
}

describe('cost from usage, the estimate and the budget (CLI, on loopback)', function () {
  this.timeout(120_000);
  let sandbox: Sandbox | undefined;
  afterEach(() => sandbox?.close());

  it('a model reporting usage with cached tokens: status --json gives each run and the total a cost that matches the price list to the cent', async () => {
    const calls = { n: 0 };
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, intercept: costlyModel(calls) });
    const t = setUp(sandbox);
    const r = await cli(['run', ...t.run], t.env);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    assert.equal(calls.n, TRACES);
    const s = await t.status();
    const expected = listUsd(100_000 * TRACES, 30_000 * TRACES, 20_000 * TRACES);
    assert.ok(expected > 0.5, `the run costs real money (${expected})`);
    assert.deepEqual({ ...s.cost, usd: cents(s.cost.usd!) }, { usd: cents(expected), inputTokens: 100_000 * TRACES, outputTokens: 20_000 * TRACES, cachedTokens: 30_000 * TRACES, source: '@pydantic/genai-prices 0.1.8' });
    assert.equal(cents(s.runs[0]!.cost.usd!), cents(expected));
    const text = await cli(['status', ...t.run.slice(0, 8)], t.env);
    const html = join(tempDir(), 'report.html');
    const report = await cli(['report', ...t.run.slice(0, 8), '--out', html], t.env);
    assert.equal(report.code, 0, report.stderr);
    const data = JSON.parse(/<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(readFileSync(html, 'utf8'))![1]!) as { runs: Array<{ cost: CostJson }> };
    assert.equal(cents(data.runs[0]!.cost.usd!), cents(expected), 'the report holds the run\'s cost');
    assert.match(text.stdout, /cost: \$0\.\d{4} \(3,000,000 in \(900,000 cached\), 600,000 out; prices: @pydantic\/genai-prices 0\.1\.8\)/);
  });

  it('a streamed run (stream_options.include_usage) is priced from the stream\'s usage; --price-in/--price-out override the list, said as "override"', async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    const t = setUp(sandbox);
    const r = await cli(['run', ...t.run, '--stream', '--price-in', '2', '--price-out', '8', '--json'], t.env);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const words = seedPrompts('benchmark', TRACES).reduce((a, p) => a + wordCount(p.content), 0);
    const progress = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; cost?: CostJson }).filter((e) => e.type === 'progress');
    assert.deepEqual(progress.at(-1)?.cost, { usd: (words * 2 + words * 8) / 1_000_000, inputTokens: words, outputTokens: words, cachedTokens: 0, source: 'override' }, 'the progress carries the cost');
    const s = await t.status();
    assert.equal(s.cost.source, 'override');
    assert.equal(s.cost.inputTokens, words);
    assert.equal(s.cost.outputTokens, words);
    assert.ok(Math.abs(s.cost.usd! - (words * 2 + words * 8) / 1_000_000) < 1e-12, `${s.cost.usd}`);
  });

  it('a target without usage shows no cost and says so, never a guess', async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 5, evaluationSeconds: 0 });
    const stateDir = tempDir();
    const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token };
    assert.equal((await cli(['run', ...svc, '--target', 'echo'], env)).code, 0);
    const s = JSON.parse((await cli(['status', ...svc, '--json'], env)).stdout) as StatusJson;
    assert.equal(s.cost.usd, null);
    assert.equal(s.cost.source, null);
    assert.match((await cli(['status', ...svc], env)).stdout, /cost: no cost: the target reported no token usage/);
  });

  it('--estimate calls no target and submits nothing: it prints the traces to call, the tokens and the cost', async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    const t = setUp(sandbox);
    const r = await cli(['run', ...t.run, '--estimate'], t.env);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    assert.equal(sandbox.stats.modelCalls, 0, 'no target call');
    assert.equal(sandbox.stats.submissions, 0, 'no submission');
    assert.match(r.stdout, new RegExp(`Traces to call: ${TRACES}\\n`));
    assert.match(r.stdout, /Input tokens: [\d,]+\nOutput tokens: [\d,]+–[\d,]+\nCost: \$[\d.]+–\$[\d.]+ \(prices: @pydantic\/genai-prices 0\.1\.8\)/);
    assert.match(r.stdout, /Assumed: no past answers/);
    assert.equal((await t.status()).counts.submitted, 0);
  });

  it('a budget of a third of the whole cost stops with exit 6 without passing it; a rerun with more finishes, every trace called once', async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, modelLatencyMs: 20 });
    const t = setUp(sandbox);
    const words = seedPrompts('benchmark', TRACES).reduce((a, p) => a + wordCount(p.content), 0);
    const whole = listUsd(words, 0, words);
    const budget = whole / 3;
    const r = await cli(['run', ...t.run, '--budget', String(budget)], t.env);
    assert.equal(r.code, 6, r.stderr.slice(-2000));
    assert.match(r.stderr, /Budget reached: \$[\d.]+ spent of \$[\d.]+, \$[\d.]+ left/);
    const stopped = await t.status();
    assert.ok(stopped.cost.usd! <= budget, `spent ${stopped.cost.usd} within ${budget}`);
    assert.ok(stopped.counts.pending > 0, 'traces were left for later');
    // The estimate held for a call errs high (the long prompt at 4 characters a token, its answer as long): more than twice the whole.
    const again = await cli(['run', ...t.run, '--budget', String(whole * 3)], t.env);
    assert.equal(again.code, 0, again.stderr.slice(-2000));
    const done = await t.status();
    assert.equal(done.counts.submitted, TRACES);
    for (const p of seedPrompts('benchmark', TRACES)) assert.equal(sandbox.stats.modelCallsByPrompt.get(p.content), 1, `${p.traceId} called once`);
    assert.ok(Math.abs(done.cost.usd! - whole) < 1e-12, `the whole spend ${done.cost.usd} is the whole cost ${whole}`);
  });
});
