import assert from 'node:assert/strict';
import { growthPercent } from '../../src/core/run/heapGrowth';

const MB = 1024 * 1024;

describe("the heap's growth past what it holds", () => {
  it('gives a small heap 8 MB of room, a large one 1.5×, and never more than V8 itself would (4×)', () => {
    for (const live of [16, 20, 32, 40, 200, 2000]) assert.equal(growthPercent(live * MB), 50, `${live} MB`);
    for (const live of [3, 6, 11, 15]) {
      const room = (live * MB * growthPercent(live * MB)) / 100;
      assert.ok(room >= 8 * MB && room < 8.5 * MB, `${live} MB: ${room / MB} MB of room`);
    }
    assert.equal(growthPercent(1 * MB), 300);
    assert.equal(growthPercent(0), 300);
  });
});
