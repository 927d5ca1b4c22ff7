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
