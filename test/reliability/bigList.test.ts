import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createApiClient } from '../../src/api/client';
import { generatedPrompt } from '../../src/sandbox/serviceApi';
import { startSandbox } from '../../src/sandbox/server';

const TRACES = 600_000;
const PROMPT_BYTES = 1000;

function digestOf(update: (hash: ReturnType<typeof createHash>) => void): string {
  const hash = createHash('sha256');
  update(hash);
  return hash.digest('hex');
}

describe('a list of any size: 600,000 prompts of 1 KB (about 620 MB) read as they stream in', function () {
  this.timeout(600_000);

  it('every item reaches the sink once, in order, exactly as sent; the list is never held whole', async () => {
    const sandbox = await startSandbox({ port: 0, generatedList: { evaluationId: 11, traces: TRACES, promptBytes: PROMPT_BYTES } });
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token });
    const got = createHash('sha256');
    let count = 0;
    let batches = 0;
    let bytes = 0;
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    try {
      const result = await client.streamPrompts('benchmark', 11, (batch) => {
        batches++;
        for (const item of batch) {
          // The order is part of the check: item i must be the sandbox's prompt i.
          assert.equal(item.traceId, `g${count}`);
          got.update(`${item.traceId}\0${item.content}\0`);
          bytes += Buffer.byteLength(item.content);
          count++;
        }
        peak = Math.max(peak, process.memoryUsage().rss);
        return Promise.resolve();
      });
      assert.equal(result.count, TRACES);
    } finally {
      await client.close();
      await sandbox.close();
    }
    assert.equal(count, TRACES);
    const want = digestOf((hash) => {
      for (let i = 0; i < TRACES; i++) hash.update(`g${i}\0${generatedPrompt(i, PROMPT_BYTES)}\0`);
    });
    assert.equal(got.digest('hex'), want, 'the contents, checksummed, are what the sandbox sent');
    // Memory is a figure for the bench (--only=list), not an assertion here: the machine is shared.
    console.log(`      ${count} items in ${batches} batches, ${(bytes / 2 ** 20).toFixed(0)} MiB of text; RSS ${(before / 2 ** 20).toFixed(0)} MiB before, peak ${(peak / 2 ** 20).toFixed(0)} MiB (+${((peak - before) / 2 ** 20).toFixed(0)} MiB, sandbox in the same process)`);
  });
});
