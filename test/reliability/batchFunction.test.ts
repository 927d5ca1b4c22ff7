import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClient } from '../../src/api/client';
import { describeStats, runStats } from '../../src/core/report/runStats';
import { EvaluationSession } from '../../src/core/session/session';
import type { RunSummary } from '../../src/core/run/engine';
import { TraceStore } from '../../src/core/store/traceStore';
import { createTarget, targetIdentity } from '../../src/core/targets/targetSpec';
import type { TargetSpec } from '../../src/core/targets/targetSpec';
import type { WorkerTarget } from '../../src/core/targets/python/workerTarget';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { tempDir } from '../unit/helpers/runs';
import { FAST_RETRY } from '../unit/helpers/servers';

const TRACES = 30;

/**
 * A batch function in `dir/model.py` that first writes each batch's trace ids as a JSON line to `dir/batches`, then runs
 * `body` (prompts, contexts and ids in scope) and returns its answers.
 */
function batchModel(dir: string, body: string): void {
  writeFileSync(
    join(dir, 'model.py'),
    `import json, time
def answer(prompts, contexts):
    ids = [c['traceId'] for c in contexts]
    with open(${JSON.stringify(join(dir, 'batches'))}, 'a') as f:
        f.write(json.dumps(ids) + '\\n')
${body}
`,
  );
}

/** The batches the function was called with, as lists of trace ids, in call order. */
function batchesIn(dir: string): string[][] {
  return readFileSync(join(dir, 'batches'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);
}

describe('a batch function: the python target called with lists of prompts (--batch-size)', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, generationSeconds: 0, evaluationSeconds: 0 });
  });
  afterEach(() => sandbox.close());

  /** A whole run against the sandbox; the user's exceptions are not retried (as a user who asked for nothing). */
  async function run(spec: TargetSpec, dir: string, concurrency: number) {
    const target = createTarget(spec, {}, { connections: concurrency, cwd: dir }) as WorkerTarget;
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, retry: FAST_RETRY });
    const session = new EvaluationSession({ origin: client.origin, kind: 'benchmark', evaluationId: 1 }, join(dir, 'state'));
    try {
      const summary = (await session.run({ client, target, identity: targetIdentity(spec, dir), concurrency })) as RunSummary;
      return { summary, session };
    } finally {
      await target.close?.();
      await client.close();
    }
  }

  it('a list of the wrong length fails the traces of that batch, in words that say so; the other batches are submitted', async () => {
    const dir = tempDir();
    batchModel(dir, `    answers = ['ok ' + i for i in ids]\n    return answers[:-1] if 'bench-0005' in ids else answers`);
    const { summary } = await run({ type: 'python', file: 'model.py', workers: 1, batchSize: 4, batchWaitMs: 200 }, dir, 4);
    const short = batchesIn(dir).find((b) => b.includes('bench-0005'))!;
    assert.equal(summary.outcome, 'failedTraces', summary.message);
    assert.deepEqual(summary.failed.map((f) => f.traceId).sort(), [...short].sort());
    for (const { reason } of summary.failed) {
      assert.equal(reason, `The Python function model.py:answer returned ${short.length - 1} answers for a batch of ${short.length} prompts: a batch function returns one answer per prompt, in the same order`);
    }
    assert.equal(summary.counts.submitted, TRACES - short.length);
    assert.equal(summary.targetCalls, TRACES, "the user's code's answer: not tried again");
    assert.equal(sandbox.answerOf(1, 'bench-0012'), 'ok bench-0012', 'each answer goes to its own trace, in order');
  });

  it('an exception fails that batch only, with its traceback; not retried', async () => {
    const dir = tempDir();
    batchModel(dir, `    if 'bench-0010' in ids:\n        raise ValueError('cannot answer a batch with bench-0010')\n    return [{'answer': p[:5], 'usage': {'promptTokens': 3}} for p in prompts]`);
    const { summary, session } = await run({ type: 'python', file: 'model.py', workers: 2, batchSize: 5 }, dir, 10);
    const raising = batchesIn(dir).find((b) => b.includes('bench-0010'))!;
    assert.equal(summary.outcome, 'failedTraces', summary.message);
    assert.deepEqual(summary.failed.map((f) => f.traceId).sort(), [...raising].sort());
    for (const { reason } of summary.failed) {
      assert.match(reason, new RegExp(`^The Python function model\\.py:answer raised on a batch of ${raising.length} prompts: ValueError: cannot answer a batch with bench-0010\\nTraceback \\(most recent call last\\):\\n  File ".*model\\.py", line \\d+, in answer\\n`));
      assert.ok(!/evalRunnerShim/.test(reason), reason);
    }
    assert.equal(summary.counts.submitted, TRACES - raising.length);
    assert.equal(summary.targetCalls, TRACES);
    assert.equal(session.store.runs[0]!.promptTokens, 3 * (TRACES - raising.length), "each item's usage goes to its own trace");
  });

  it('batches are filled: 8 at once make calls of 8, the last 6 go when the wait is over', async () => {
    const dir = tempDir();
    batchModel(dir, `    time.sleep(0.3)\n    return ['%d of %d' % (i + 1, len(prompts)) for i in range(len(prompts))]`);
    // A 60 ms wait: room for a loaded machine's jitter, well under the ~130 ms over which paced starts (as a hosted
    // model's are, 2 × the concurrency per latency) reached the gatherer, which made batches of 3 to 5.
    const { summary, session } = await run({ type: 'python', file: 'model.py', workers: 1, batchSize: 8, batchWaitMs: 60 }, dir, 8);
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.deepEqual(batchesIn(dir).map((b) => b.length), [8, 8, 8, 6]);
    // The run journals each answer's batch size, and its figures say so.
    await session.load();
    assert.match(describeStats(runStats(session.store.currentRun!)) ?? '', /batches: mean 7\.5, max 8/);
    assert.equal(sandbox.answerOf(1, 'bench-0000'), '1 of 8');
  });

  it("a batch that does not fill is sent once the wait is over; that wait is the queue wait, not the batch's latency", async () => {
    const dir = tempDir();
    batchModel(dir, `    time.sleep(0.1)\n    return ['%d of %d' % (i + 1, len(prompts)) for i in range(len(prompts))]`);
    const { summary, session } = await run({ type: 'python', file: 'model.py', workers: 1, batchSize: 8, batchWaitMs: 1000 }, dir, 8);
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.deepEqual(batchesIn(dir).map((b) => b.length), [8, 8, 8, 6]);
    const run0 = session.store.runs[0]!;
    // The last 6 waited a second for a batch that never filled: a wait, told apart, not the function's 100 ms.
    assert.ok(Math.max(...run0.latencies) < 900, `latencies ${run0.latencies.join(', ')}`);
    assert.ok(Math.min(...run0.latencies) >= 95, `latencies ${run0.latencies.join(', ')}`);
    assert.ok(run0.queueWaits.filter((ms) => ms >= 950).length >= 6, `queue waits ${run0.queueWaits.join(', ')}`);
  });

  it('fewer prompts than the batch size are answered once the wait is over, as one call; each told its batch size', async () => {
    const dir = tempDir();
    batchModel(dir, `    return ['%s (%d)' % (p, len(prompts)) for p in prompts]`);
    const target = createTarget({ type: 'python', file: 'model.py', workers: 1, batchSize: 8, batchWaitMs: 300 }, {}, { connections: 8, cwd: dir });
    try {
      await target.warmUp!(new AbortController().signal);
      const told: Array<{ queued?: number; batch?: number }> = [{}, {}, {}];
      const t0 = Date.now();
      const answers = await Promise.all(
        ['a', 'b', 'c'].map((prompt, i) =>
          target.send(prompt, {
            signal: new AbortController().signal,
            timeoutMs: 10_000,
            context: { traceId: `t${i}` },
            onQueued: (ms) => (told[i]!.queued = ms),
            onBatch: (n) => (told[i]!.batch = n),
          }),
        ),
      );
      const elapsed = Date.now() - t0;
      assert.deepEqual(answers, ['a (3)', 'b (3)', 'c (3)']);
      assert.ok(elapsed >= 290 && elapsed < 3000, `answered after ${elapsed} ms`);
      assert.deepEqual(batchesIn(dir), [['t0', 't1', 't2']]);
      assert.deepEqual(told.map((t) => t.batch), [3, 3, 3]);
      assert.ok(told.every((t) => t.queued !== undefined && t.queued >= 290), `queued ${told.map((t) => t.queued).join(', ')}`);
    } finally {
      await target.close?.();
    }
  });

  it("the run's figures say the batch sizes reached (from the journal's answers)", () => {
    const answer = (id: string, bs: number) => ({ t: 'answer' as const, id, a: 'x', at: 2, ms: 100, bs, run: 'r' });
    const store = TraceStore.fromRecords([{ t: 'run', at: 1, run: 'r', fp: 'f', target: 'python' }, ...[0, 1, 2, 3].map((i) => answer(`a${i}`, 4)), answer('b0', 2), answer('b1', 2)]);
    const stats = runStats(store.runs[0]!);
    assert.deepEqual(stats.batches, { mean: 3, max: 4 }, 'per batch (4 and 2), not per answer');
    assert.match(describeStats(stats), /batches: mean 3, max 4/);
    const none = TraceStore.fromRecords([{ t: 'run', at: 1, run: 'r', fp: 'f', target: 'echo' }, { t: 'answer', id: 'a', a: 'x', at: 2, ms: 1, run: 'r' }]);
    assert.ok(!describeStats(runStats(none.runs[0]!)).includes('batches'));
  });
});
