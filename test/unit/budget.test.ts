import assert from 'node:assert/strict';
import { Budget } from '../../src/core/cost/budget';

describe('the budget: an estimate held per call in flight', () => {
  it('a call that does not fit once nothing is in flight stops the run, however the estimates were let go (no float dust)', async () => {
    const budget = new Budget(0.001, 0, { src: 'override', in: 2, out: 8 });
    // Estimates let go in another order than taken leave 5e-20 of a dollar held in floating point.
    const held = [60, 20, 35].map((n) => budget.reserve('x'.repeat(n))!);
    for (const i of [0, 2, 1]) budget.release(held[i]!);
    const signal = new AbortController().signal;
    const admitted = await Promise.race([budget.admit('x'.repeat(10_000), signal), new Promise((resolve) => setImmediate(() => resolve('waits for a call that is not there')))]);
    assert.equal(admitted, undefined);
  });
});
