import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import type { ApiClient } from '../../src/api/client';
import type { PromptItem } from '../../src/api/schemas';
import { openJournal } from '../../src/core/journal/journal';
import type { EngineOptions } from '../../src/core/run/engineOptions';
import { listPrompts } from '../../src/core/run/runList';
import { Gate } from '../../src/core/run/gate';
import { RateScheduler } from '../../src/core/run/rateScheduler';
import { planQueue, targetConflict } from '../../src/core/run/runPlan';
import { RunState, waitingText } from '../../src/core/run/runState';
import { TargetCaller } from '../../src/core/run/targetCalls';
import { TargetError } from '../../src/core/targets/target';
import { targetIdentity } from '../../src/core/targets/targetSpec';
import { TraceStore } from '../../src/core/store/traceStore';
import { scriptedTarget, tempDir } from './helpers/runs';

const at = 1;
/** t0 pending, t1 answered, t2 submitted, t3 failed at submit (answer kept), t4 failed at the target, t5 skipped. */
function store(): TraceStore {
  const s = new TraceStore();
  s.setListed(['t0', 't1', 't2', 't3', 't4', 't5'].map((traceId) => ({ traceId, content: `prompt ${traceId}` })));
  s.apply({ t: 'run', at, run: 'r1', fp: targetIdentity({ type: 'echo' }).fingerprint, target: 'echo' });
  for (const id of ['t1', 't2', 't3']) s.apply({ t: 'answer', id, a: `answer ${id}`, at });
  s.apply({ t: 'submitted', id: 't2', at });
  s.apply({ t: 'failed', id: 't3', reason: 'HTTP 503', stage: 'submit', at });
  s.apply({ t: 'failed', id: 't4', reason: 'timeout', stage: 'target', at });
  s.apply({ t: 'skipped', id: 't5', reason: 'not applicable', at });
  return s;
}
const ids = (list: Iterable<{ traceId: string }>) => [...list].map((t) => t.traceId);

/** Whether what `ref` points to is collected by a full collection once nothing else holds it. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // A WeakRef's target is kept until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return ref.deref() === undefined;
}

describe('run parts, each alone', () => {
  describe('planQueue', () => {
    it('submits journaled answers first, sends the rest to the target, never a submitted or skipped trace', () => {
      const plan = planQueue(store());
      assert.deepEqual(ids(plan.submitFirst), ['t1', 't3']);
      assert.deepEqual(ids(plan.callTarget), ['t0', 't4']);
      assert.deepEqual(ids(plan.queue), ['t1', 't3', 't0', 't4']);
      assert.deepEqual([plan.queue.at(2)?.traceId, plan.queue.at(4), plan.callTarget.length], ['t0', undefined, 2]);
    });
    it('keeps no trace of its own: a queued trace is made when reached and collected once let go', async () => {
      const plan = planQueue(store());
      const reached = new WeakRef(plan.queue.at(0)!);
      assert.equal(await collected(reached), true, 'the store kept the planned trace');
      assert.equal(plan.queue.at(0)?.state, 'answered');
    });
    it('keeps no trace a walk over the store made', async () => {
      const s = store();
      const walked = new WeakRef([...s.traces.values()].at(-1)!);
      assert.equal(await collected(walked), true, 'the store kept the trace its walk made');
    });
    it('holds answers, limits target calls in list order, handles only the traces asked for, or ignores answers', () => {
      assert.deepEqual(ids(planQueue(store(), { holdAnswers: true }).submitFirst), []);
      const limited = planQueue(store(), { limit: 1 });
      assert.deepEqual([ids(limited.callTarget), limited.wanted], [['t0'], 2]);
      assert.deepEqual(ids(planQueue(store(), { only: new Set(['t4']) }).callTarget), ['t4']);
      assert.deepEqual(ids(planQueue(store(), { ignoreAnswers: true }).callTarget), ['t0', 't1', 't2', 't3', 't4']);
    });
    it('a fresh run record sets every answer aside but the skips', () => {
      const s = store();
      s.apply({ t: 'run', at, run: 'r2', fp: 'other', target: 'command: x', mode: 'fresh' });
      assert.deepEqual(ids(planQueue(s).callTarget), ['t0', 't1', 't2', 't3', 't4']);
      assert.equal(s.get('t5')!.state, 'skipped');
    });
  });

  describe('listPrompts', () => {
    it('lets the ids listed go once the list is journaled: the run keeps no listener holding them', async () => {
      const { journal } = await openJournal(join(tempDir(), 'benchmark-1.jsonl'));
      const client = { streamPrompts: async (_kind: string, _id: number, sink: (batch: PromptItem[]) => Promise<void>) => (await sink([{ traceId: 't0', content: 'p' }]), { count: 1 }) };
      const run = new RunState(() => undefined, new AbortController().signal, undefined);
      const options = { client: client as unknown as ApiClient, kind: 'benchmark' as const, evaluationId: 1, store: new TraceStore(), journal };
      const listed = new WeakRef(await listPrompts(options as EngineOptions, run));
      assert.equal(await collected(listed), true, 'the run kept the ids listed');
      await journal.close();
    });
    it('keeps no trace of the prompts it finds journaled already, listed again or not', async () => {
      for (const journaledPrompts of [false, true]) {
        const { journal } = await openJournal(join(tempDir(), 'benchmark-1.jsonl'));
        const client = { streamPrompts: async (_kind: string, _id: number, sink: (batch: PromptItem[]) => Promise<void>) => (await sink([{ traceId: 't0', content: 'p' }]), { count: 1 }) };
        const known = new TraceStore();
        known.apply({ t: 'item', id: 't0', p: 'p', at });
        const run = new RunState(() => undefined, new AbortController().signal, undefined);
        const options = { client: client as unknown as ApiClient, kind: 'benchmark' as const, evaluationId: 1, store: known, journal, journaledPrompts };
        assert.deepEqual([...(await listPrompts(options as EngineOptions, run))], ['t0']);
        assert.equal(await collected(new WeakRef(known.traces.at(0)!)), true, `the store kept a view (journaledPrompts: ${journaledPrompts})`);
        await journal.close();
      }
    });
  });

  describe('targetConflict', () => {
    it('names the target that gave the journaled answers, and allows the same target, fresh and reuse', () => {
      const command = targetIdentity({ type: 'command', command: 'tr a-z A-Z' });
      const conflict = targetConflict(store(), command, 'continue')!;
      assert.deepEqual(conflict.answeredBy.map((e) => [e.target, e.traces, e.submitted]), [['echo', 3, 1]]);
      assert.equal(targetConflict(store(), targetIdentity({ type: 'echo' }), 'continue'), undefined);
      assert.equal(targetConflict(store(), command, 'fresh'), undefined);
      assert.equal(targetConflict(store(), command, 'reuse'), undefined);
    });
    it('fingerprints what changes answers and nothing secret', () => {
      const a = targetIdentity({ type: 'openai', baseUrl: 'https://api.example/v1?key=s3cret', model: 'm', temperature: 0 });
      assert.equal(a.description, 'openai: m @ https://api.example/v1?key=…, temperature 0');
      assert.notEqual(a.fingerprint, targetIdentity({ type: 'openai', baseUrl: 'https://api.example/v1?key=s3cret', model: 'm', temperature: 1 }).fingerprint);
      assert.equal(a.fingerprint, targetIdentity({ type: 'openai', baseUrl: 'https://api.example/v1?key=other', model: 'm', temperature: 0 }).fingerprint);
    });
  });

  describe('RunState', () => {
    it('stops for one reason: the first a part gives, an unexpected failure over it, else the user cancelling', () => {
      const hard = new AbortController();
      const drain = new AbortController();
      const run = new RunState(() => undefined, hard.signal, drain.signal);
      assert.equal(run.stopReason, undefined);
      drain.abort();
      assert.equal(run.stopReason!.outcome, 'cancelled');
      run.halt('auth', 'token rejected');
      run.halt('quota', 'later reason');
      assert.equal(run.stopReason!.outcome, 'auth');
      run.fail(new Error('boom'));
      assert.deepEqual([run.stopReason!.outcome, run.stopReason!.message], ['error', 'The run failed unexpectedly: boom']);
    });
  });

  describe('TargetCaller', () => {
    const policy = { retries: 2, timeoutMs: 1000, maxRetryAfterMs: 60_000, maxQuotaStrikes: 3, maxRateLimitRetries: 20, onError: 'fail' as const };
    const info = store().get('t0')!;
    it('halts the run after three quota-worded rate limits, with its own reason', async () => {
      const run = new RunState(() => undefined, new AbortController().signal, undefined);
      const target = scriptedTarget(() => {
        throw new TargetError('insufficient_quota', 'rateLimited', { quota: true, retryAfterMs: 1 });
      });
      const result = await new TargetCaller(target, new RateScheduler({ concurrency: 4, initialPerSecond: 1000 }), policy, run).call(info, new AbortController().signal);
      assert.equal(result, 'stopped');
      assert.equal(run.stopReason!.outcome, 'quota');
      assert.equal(target.total(), 3);
    });
    it('retries a passing failure, then gives up with the reason, or with fixed words when errors are submitted', async () => {
      const failing = () =>
        scriptedTarget(() => {
          throw new TargetError('HTTP 500: secret-ish body', 'failed', { status: 500, retryable: true });
        });
      const run = new RunState(() => undefined, new AbortController().signal, undefined);
      const target = failing();
      assert.deepEqual(await new TargetCaller(target, new RateScheduler({ concurrency: 4, initialPerSecond: 1000 }), { ...policy, retries: 1 }, run).call(info, new AbortController().signal), {
        fail: 'HTTP 500: secret-ish body',
      });
      assert.equal(target.total(), 2);
      const submitted = await new TargetCaller(failing(), new RateScheduler({ concurrency: 4, initialPerSecond: 1000 }), { ...policy, retries: 0, onError: 'submit' }, run).call(
        info,
        new AbortController().signal,
      );
      assert.deepEqual(submitted, { answer: 'target error: HTTP 500', ms: 0, errorAnswer: true });
    });
  });

  describe('Gate', () => {
    it('gives a place that is let go to the first waiter, never to one that comes after it; a free place is taken at once', async () => {
      const gate = new Gate(1);
      assert.equal(gate.enter(), undefined);
      const order: string[] = [];
      const first = gate.enter()?.then(() => order.push('first'));
      const second = gate.enter()?.then(() => order.push('second'));
      gate.leave();
      // A newcomer before the first waiter has woken: it waits its turn rather than take the place let go.
      const late = gate.enter()?.then(() => order.push('late'));
      assert.ok(first && second && late);
      await first;
      gate.leave();
      await second;
      gate.leave();
      await late;
      assert.deepEqual(order, ['first', 'second', 'late']);
      gate.leave();
      assert.equal(gate.enter(), undefined);
    });
  });
});

describe('the wait for generation in progress', () => {
  it('counts down to the next check as progress is shown again, never below zero', () => {
    const waiting = { reason: 'generation is not finished', nextCheckAt: 100_000 };
    assert.equal(waitingText(waiting, 88_000), 'generation is not finished; next check in 12 s');
    assert.equal(waitingText(waiting, 91_200), 'generation is not finished; next check in 9 s');
    assert.equal(waitingText(waiting, 101_000), 'generation is not finished; next check in 0 s');
    const run = new RunState(() => undefined, new AbortController().signal, undefined);
    run.waiting = { reason: 'generation is not finished', nextCheckAt: Date.now() + 30_000 };
    assert.match(run.progress(new TraceStore(), { concurrency: 1 }).waitingReason ?? '', /next check in (30|29) s$/);
  });
});
