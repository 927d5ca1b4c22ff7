import assert from 'node:assert/strict';
import { RateScheduler } from '../../src/core/run/rateScheduler';
import { parseRateHeaders, parseResetDuration } from '../../src/core/targets/rateHeaders';

const never = new AbortController().signal;
const tick = () => new Promise((r) => setImmediate(r));

describe('rate scheduler', () => {
  it('admits at most `concurrency` calls; a release admits the next', async () => {
    const pace = new RateScheduler({ concurrency: 2, initialPerSecond: 10_000 });
    await pace.acquire(never);
    await pace.acquire(never);
    let third = false;
    const pending = pace.acquire(never).then(() => (third = true));
    await tick();
    assert.equal(third, false);
    pace.release(true, 5);
    await pending;
    assert.equal(third, true);
    pace.dispose();
  });

  it('spaces starts evenly at its pace: no burst', async () => {
    const pace = new RateScheduler({ concurrency: 64, initialPerSecond: 50 });
    // The moments the scheduler starts each call (its noteStart), not when each caller's continuation ran: on a busy
    // machine a continuation can run late, next to the following start, and look like a burst that never was.
    const starts: number[] = [];
    const noteStart = pace.noteStart.bind(pace);
    pace.noteStart = (now) => {
      starts.push(now ?? performance.now());
      noteStart(now);
    };
    await Promise.all(Array.from({ length: 6 }, () => pace.acquire(never)));
    assert.equal(starts.length, 6);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    // 50 per second: a start every 20 ms (the timer may be late, never early by more than its millisecond).
    for (const gap of gaps) assert.ok(gap >= 18, `gap ${gap.toFixed(1)} ms`);
    pace.dispose();
  });

  it('drops to just under what was admitted on a 429, once per round trip; a known cap is never passed', async () => {
    const pace = new RateScheduler({ concurrency: 64, initialPerSecond: 200 });
    // 20 starts at 200/s (100 ms; 640 ms calls keep the pace there), none refused: 200/s admitted, so the
    // pace drops to 0.9 of it at most.
    for (let i = 0; i < 20; i++) {
      await pace.acquire(never);
      pace.release(true, 640);
    }
    assert.equal(pace.rateLimited(), true);
    assert.ok(pace.perSecond <= 180 && pace.perSecond > 100, `${pace.perSecond}`);
    const after = pace.perSecond;
    assert.equal(pace.rateLimited(), false, 'a burst of 429s counts once');
    assert.equal(pace.perSecond, after);
    pace.dispose();
    const capped = new RateScheduler({ concurrency: 64, maxPerSecond: 2 });
    assert.equal(capped.perSecond, 2);
  });

  it('starts at the pace the endpoint announces, a little under it', () => {
    const pace = new RateScheduler({ concurrency: 64 });
    pace.observe({ requestsPerSecond: 100 });
    assert.equal(pace.perSecond, 95);
    const capped = new RateScheduler({ concurrency: 64, maxPerSecond: 10 });
    capped.observe({ requestsPerSecond: 100 });
    assert.equal(capped.perSecond, 10, '--max-rpm stays the cap');
  });

  it('a cancel ends the wait', async () => {
    const pace = new RateScheduler({ concurrency: 1, initialPerSecond: 1000 });
    await pace.acquire(never);
    const controller = new AbortController();
    const pending = pace.acquire(controller.signal);
    controller.abort();
    await assert.rejects(pending, (e: Error) => e.name === 'AbortError');
    pace.dispose();
  });
});

describe('rate-limit headers', () => {
  it("reads OpenAI's, Anthropic's and the IETF fields", () => {
    assert.deepEqual(parseRateHeaders({ 'x-ratelimit-limit-requests': '6000', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6m0s' }), {
      requestsPerSecond: 100,
      remaining: 0,
      resetMs: 360_000,
    });
    assert.deepEqual(parseRateHeaders({ 'anthropic-ratelimit-requests-limit': '3000', 'anthropic-ratelimit-requests-remaining': '12' }), {
      requestsPerSecond: 50,
      remaining: 12,
    });
    assert.deepEqual(parseRateHeaders({ 'ratelimit-policy': '100;w=60', ratelimit: 'limit=100, remaining=7, reset=3' }), {
      requestsPerSecond: 100 / 60,
      remaining: 7,
      resetMs: 3000,
    });
    assert.equal(parseRateHeaders({ 'ratelimit-policy': '"default";q=20;w=1' })?.requestsPerSecond, 20);
    assert.deepEqual(parseRateHeaders({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '1.5s' }), { remaining: 0, resetMs: 1500 });
    assert.equal(parseRateHeaders({ 'x-ratelimit-remaining-tokens': '5000' }), undefined, 'tokens left: nothing to do');
    assert.equal(parseRateHeaders({ 'content-type': 'application/json' }), undefined);
  });

  it('reads reset durations such as 12ms, 1s, 6m0s', () => {
    assert.equal(parseResetDuration('12ms'), 12);
    assert.equal(parseResetDuration('1s'), 1000);
    assert.equal(parseResetDuration('6m0s'), 360_000);
    assert.equal(parseResetDuration('1h2m3.5s'), 3_723_500);
    assert.equal(parseResetDuration('soon'), undefined);
  });
});
