import assert from 'node:assert/strict';
import { Budget } from '../../src/core/cost/budget';

const price = { src: 'test', in: 0.15, out: 0.6 };

/** What admit does before anything else can happen: its answer, or 'waiting' when it waits for a call to end. */
function settledAtOnce<T>(p: Promise<T>): Promise<T | 'waiting'> {
  return Promise.race([p, new Promise<'waiting'>((resolve) => setImmediate(() => resolve('waiting')))]);
}

describe('a budget with nothing in flight never waits', () => {
  it('after calls whose estimates do not sum back to zero in floating point, a call that cannot fit stops the run', async () => {
    const budget = new Budget(0.00005, 0, price);
    // Held and let go in this order, 4 and 20 characters leave 3.4e-21 USD "held" by nothing.
    const a = budget.reserve('x'.repeat(4))!;
    const b = budget.reserve('y'.repeat(20))!;
    budget.release(a);
    budget.release(b);
    assert.equal(await settledAtOnce(budget.admit('z'.repeat(400), new AbortController().signal)), undefined);
  });

  it('a call waiting for room goes once the run is cancelled', async () => {
    const budget = new Budget(0.00005, 0, price);
    assert.ok(budget.reserve('x'.repeat(4)) !== undefined);
    const cancel = new AbortController();
    const waiting = budget.admit('z'.repeat(400), cancel.signal);
    assert.equal(await settledAtOnce(waiting), 'waiting', 'it waits while a call is in flight');
    cancel.abort();
    assert.equal(await settledAtOnce(waiting), undefined);
  });
});
describe('the budget: an estimate held per call in flight (let go out of order)', () => {
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
