import assert from 'node:assert/strict';
import { AdaptiveLimiter } from '../../src/core/limiter';

describe('adaptive concurrency limiter', () => {
  const never = new AbortController().signal;

  it('halves on a rate limit (once per cool-down), never below 1, and grows back additively', () => {
    const limiter = new AdaptiveLimiter(8, 0);
    limiter.rateLimited(undefined);
    assert.equal(limiter.limit, 4);
    limiter.rateLimited(undefined);
    limiter.rateLimited(undefined);
    limiter.rateLimited(undefined);
    assert.equal(limiter.limit, 1);
    // One more per `limit` successes.
    for (let i = 0; i < 1; i++) limiter.release('success');
    assert.equal(limiter.limit, 2);
    limiter.release('success');
    assert.equal(limiter.limit, 2);
    limiter.release('success');
    assert.equal(limiter.limit, 3);
  });

  it('counts a burst of rate limits once within the cool-down', () => {
    const limiter = new AdaptiveLimiter(8, 60_000);
    for (let i = 0; i < 5; i++) limiter.rateLimited(undefined);
    assert.equal(limiter.limit, 4);
  });

  it('admits at most `limit` holders; a release admits the next', async () => {
    const limiter = new AdaptiveLimiter(2);
    await limiter.acquire(never);
    await limiter.acquire(never);
    let third = false;
    const pending = limiter.acquire(never).then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(third, false);
    limiter.release('success');
    await pending;
    assert.equal(third, true);
  });

  it('pauses everyone for the Retry-After, and a cancel ends the wait', async () => {
    const limiter = new AdaptiveLimiter(4);
    limiter.rateLimited(60_000);
    const controller = new AbortController();
    const pending = limiter.acquire(controller.signal);
    controller.abort();
    await assert.rejects(pending, (e: Error) => e.name === 'AbortError');
  });
});
