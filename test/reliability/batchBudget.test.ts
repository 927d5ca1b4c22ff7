import assert from 'node:assert/strict';
import { createBatchTarget } from '../../src/core/targets/openai/openaiBatch';
import { createTarget } from '../../src/core/targets/targetSpec';
import type { TargetSpec } from '../../src/core/targets/targetSpec';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { engineRun, tempDir } from '../unit/helpers/runs';

const TRACES = 30;
// Batch API prices (half the live ones): the budget counts a batch's estimate before it is sent.
const PRICE = { src: 'override', in: 2, out: 8, batch: true };

describe('the budget on the Batch API path (on loopback)', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
  });
  afterEach(() => sandbox.close());

  async function run(budgetUsd: number) {
    const spec: TargetSpec = { type: 'openai', baseUrl: `${sandbox.baseUrl}/v1`, model: 'gpt-4o-mini', batch: true };
    const options = { connections: 8, batch: { limits: { maxRequests: 10, maxBytes: 1024 * 1024 }, pollMs: 30 } };
    const target = createTarget(spec, { apiKey: 'sk-batch-test' }, options);
    const batch = createBatchTarget(spec, { apiKey: 'sk-batch-test' }, options)!;
    try {
      return await engineRun(sandbox, 'benchmark', tempDir(), target, { batch, price: PRICE, budgetUsd });
    } finally {
      await batch.close();
    }
  }
  const batchesCreated = () => sandbox.stats.requests.get('POST /v1/batches') ?? 0;

  it('a batch whose estimate would pass the budget is not sent: the run ends as budget, with nothing uploaded', async () => {
    const { summary } = await run(0.000001);
    assert.equal(summary.outcome, 'budget', summary.message);
    assert.match(summary.message ?? '', /Budget reached: \$[\d.]+ spent of \$0\.000001/);
    assert.equal(batchesCreated(), 0, 'no batch created');
    assert.equal(sandbox.stats.requests.get('POST /v1/files') ?? 0, 0, 'no file uploaded');
  });

  it('batches whose estimates fit the budget are all sent, and the run completes', async () => {
    const whole = await run(1_000);
    assert.equal(whole.summary.outcome, 'completed', whole.summary.message);
    assert.equal(batchesCreated(), 3, 'three batches of ten');
  });
});
