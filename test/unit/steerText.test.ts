import assert from 'node:assert/strict';
import { steersJson, steersText } from '../../src/core';

const at = (h: number, m: number, s: number) => new Date(2026, 0, 1, h, m, s).getTime();

describe("a run's steers, as its history says them", () => {
  it('pairs a pause with the resume that ended it, and names a concurrency set and a pause never resumed', () => {
    const text = steersText([
      { at: at(14, 2, 10), ev: 'pause' },
      { at: at(14, 2, 31), ev: 'resume' },
      { at: at(14, 3, 0), ev: 'concurrency', n: 1 },
      { at: at(14, 4, 0), ev: 'pause' },
    ]);
    assert.equal(text, 'paused 14:02:10–14:02:31 · concurrency 1 at 14:03:00 · paused at 14:04:00');
    assert.equal(steersText(undefined), undefined);
    assert.equal(steersText([]), undefined);
  });

  it('keeps a run steered all day brief: how often, and the last few', () => {
    const many = Array.from({ length: 10 }, (_, i) => ({ at: at(9, i, 0), ev: 'concurrency' as const, n: i + 1 }));
    assert.equal(steersText(many), 'steered 10×, the last 4: concurrency 7 at 09:06:00 · concurrency 8 at 09:07:00 · concurrency 9 at 09:08:00 · concurrency 10 at 09:09:00');
  });

  it('gives --json each steer with its time in ISO 8601 and the concurrency by name', () => {
    assert.deepEqual(steersJson([{ at: Date.UTC(2026, 0, 1), ev: 'concurrency', n: 3 }, { at: Date.UTC(2026, 0, 1, 0, 0, 1), ev: 'pause' }]), [
      { at: '2026-01-01T00:00:00.000Z', ev: 'concurrency', concurrency: 3 },
      { at: '2026-01-01T00:00:01.000Z', ev: 'pause' },
    ]);
  });
});
