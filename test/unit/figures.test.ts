import assert from 'node:assert/strict';
import { isFastRecord, journalRecordSchema, parseLine } from '../../src/core/journal/journalRecords';
import { RateScheduler } from '../../src/core/run/rateScheduler';
import { reportData } from '../../src/core/report/reportData';
import { describeStats, percentile, runStats, spread } from '../../src/core/report/runStats';
import { RunState } from '../../src/core/run/runState';
import { TargetCaller } from '../../src/core/run/targetCalls';
import type { TargetCallPolicy } from '../../src/core/run/targetCalls';
import { TargetError } from '../../src/core/targets/target';
import { TraceStore } from '../../src/core/store/traceStore';
import { scriptedTarget } from './helpers/runs';

/** A run of four answers (two waited for a worker) and two traces that failed at the target, one at submission. */
function store(withWaits: boolean): TraceStore {
  const s = new TraceStore();
  s.setListed(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((traceId) => ({ traceId, content: `prompt ${traceId}` })));
  s.apply({ t: 'run', at: 1000, run: 'r1', target: 'python' });
  for (const [id, ms, qw] of [['a', 50, 0], ['b', 52, 0], ['c', 51, 150], ['d', 55, 160]] as const) {
    s.apply({ t: 'answer', id, a: 'ok', at: 1000 + ms + qw, ms, ...(withWaits ? { qw } : {}), run: 'r1' });
  }
  s.apply({ t: 'failed', id: 'e', reason: 'The Python function model.py:answer raised: ValueError: no\nTraceback …', stage: 'target', at: 1900 });
  s.apply({ t: 'failed', id: 'f', reason: 'The Python function model.py:answer raised: ValueError: no', stage: 'target', at: 1950 });
  s.apply({ t: 'answer', id: 'g', a: 'ok', at: 1960, ms: 50, run: 'r1' });
  s.apply({ t: 'failed', id: 'g', reason: 'HTTP 400 at the service', stage: 'submit', at: 1970 });
  s.apply({ t: 'end', run: 'r1', at: 2000, outcome: 'failedTraces' });
  return s;
}

describe('figures mean what they say', () => {
  it('latency p50, p95 and max are the nearest-rank ones of the sorted values, selected rather than sorted', () => {
    let seed = 7;
    const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (const n of [1, 2, 3, 19, 20, 21, 100, 1001, 5000]) {
      for (const spreadOf of [1000, 5]) {
        const values = Array.from({ length: n }, () => Math.floor(next() * spreadOf));
        const sorted = Float64Array.from(values).sort();
        const want = { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted[n - 1] };
        assert.deepEqual(spread(values), want, `${n} values of 0..${spreadOf}`);
      }
    }
    assert.deepEqual(spread([5, 4, 3, 2, 1]), { p50: 3, p95: 5, max: 5 }, 'descending');
  });

  it('the wait for a free worker is a figure of its own, shown only when a target measured it', () => {
    const waited = runStats(store(true).runs[0]!);
    assert.deepEqual(waited.queueWaitMs, { p50: 0, p95: 160, max: 160 });
    assert.deepEqual(waited.latencyMs, { p50: 51, p95: 55, max: 55 });
    assert.match(describeStats(waited), /^latency p50 51 ms · p95 55 ms · max 55 ms · worker wait p50 0 ms · p95 160 ms · max 160 ms/);
    const plain = runStats(store(false).runs[0]!);
    assert.equal(plain.queueWaitMs, undefined);
    assert.ok(!describeStats(plain).includes('worker wait'), describeStats(plain));
  });

  it("status's rate is answers per second from the run's start to its last answer, and says so", () => {
    const s = TraceStore.fromRecords([
      { t: 'run', at: 1_000, run: 'r', fp: 'f', target: 'echo' },
      { t: 'answer', id: 'a', a: 'x', at: 2_000, ms: 1, run: 'r' },
      { t: 'answer', id: 'b', a: 'x', at: 3_000, ms: 1, run: 'r' },
    ]);
    assert.match(describeStats(runStats(s.runs[0]!)), / · 1 answered\/s$/);
  });

  it('the journal keeps the wait as qw, on its fast path as in its schema', () => {
    const record = { t: 'answer', id: 't', a: 'ok', at: 1, ms: 50, qw: 150 };
    assert.equal(isFastRecord(record), true);
    assert.deepEqual(parseLine(JSON.stringify(record)), record);
    for (const qw of ['150', null, true, [1]]) {
      const odd = { ...record, qw };
      assert.equal(isFastRecord(odd), false, JSON.stringify(odd));
      assert.equal(journalRecordSchema.safeParse(odd).success, false, JSON.stringify(odd));
    }
  });

  it('traces that failed at the target are errors on the timeline (a failed submission is not counted twice)', () => {
    const data = reportData(store(true), { kind: 'benchmark', evaluationId: 1, origin: 'http://127.0.0.1' });
    const { answers, errors } = data.runs[0]!.timeline;
    const sum = (v: readonly number[]) => v.reduce((a, b) => a + b, 0);
    assert.equal(sum(errors), 2);
    assert.equal(sum(answers), 7, 'five answers and two failures');
    errors.forEach((n, i) => assert.ok(n <= answers[i]!, `bin ${i}: an error bar within its bin's bar`));
    assert.deepEqual(data.runs[0]!.queueWaitMs, { p50: 0, p95: 160, max: 160 });
  });

  describe('TargetCaller: the user\'s exception is the prompt\'s answer', () => {
    const policy: TargetCallPolicy = { retries: 2, timeoutMs: 1000, maxRetryAfterMs: 60_000, maxQuotaStrikes: 3, maxRateLimitRetries: 20, onError: 'fail' };
    const info = store(false).get('a')!;
    const raising = () =>
      scriptedTarget(() => {
        throw new TargetError('The worker raised: ValueError: no', 'failed', { retryable: true, userCode: true, cause: 'worker error' });
      });
    const call = (target: ReturnType<typeof raising>, p: TargetCallPolicy) =>
      new TargetCaller(target, new RateScheduler({ concurrency: 4, initialPerSecond: 1000 }), p, new RunState(() => undefined, new AbortController().signal, undefined)).call(
        info,
        new AbortController().signal,
      );

    it('is not retried by default, while a passing failure is', async () => {
      const target = raising();
      assert.deepEqual(await call(target, policy), { fail: 'The worker raised: ValueError: no' });
      assert.equal(target.total(), 1);
      const crashing = scriptedTarget(() => {
        throw new TargetError('The worker exited with code 9 while answering', 'failed', { retryable: true, cause: 'worker exited with code 9' });
      });
      await call(crashing, policy);
      assert.equal(crashing.total(), 3);
    });

    it('is retried when the user asked for retries', async () => {
      const target = raising();
      await call(target, { ...policy, userCodeRetries: 2 });
      assert.equal(target.total(), 3);
    });

    it('the latency is the call\'s own time: the wait the target reports is taken out and kept apart', async () => {
      const target = scriptedTarget(() => 'ok');
      target.send = async (_prompt, options) => {
        await new Promise((r) => setTimeout(r, 120));
        options.onQueued?.(100);
        await new Promise((r) => setTimeout(r, 30));
        return 'ok';
      };
      const result = await call(target, policy);
      assert.ok(typeof result === 'object' && 'answer' in result, JSON.stringify(result));
      assert.equal(result.queueMs, 100);
      assert.ok(result.ms >= 40 && result.ms < 120, `own time ${result.ms} ms of ~150 ms in all`);
    });
  });
});
