import assert from 'node:assert/strict';
import type { ComparedTrace } from '../../src/core';
import { CompareTable, DIFFERING_ONLY } from '../../src/extension/compare/compareTable';
import { MAX_WINDOW } from '../../src/extension/panels/rowView';
import { CompareRow } from '../../src/webview/protocol';

/** Compare Runs' table on the host: the page gets windows of it, so its filters are applied here. */
function compared(n: number, reads?: { count: number }): ComparedTrace[] {
  const answer = (text: string) => ({
    get answer() {
      if (reads) reads.count++;
      return text;
    },
    latencyMs: 5,
    errorAnswer: false,
    by: 'target' as const,
  });
  return Array.from({ length: n }, (_, i) => ({
    traceId: `t${i}`,
    prompt: `Prompt ${i}`,
    a: answer(`answer ${i}`),
    b: answer(i % 3 === 0 ? `ANSWER ${i}` : `answer ${i}`),
    differs: i % 3 === 0,
  }));
}

const ids = (table: CompareTable) => table.window(0, MAX_WINDOW, null).rows.map((r) => r[CompareRow.TraceId]);

describe('Compare Runs table on the host (windows of it go to the page)', () => {
  it('shows only the differing traces by default, all on asking, and searches prompts and both answers', () => {
    const table = new CompareTable();
    table.load(compared(9));
    assert.equal(table.total, 9);
    assert.equal(table.differing, 3);
    assert.deepEqual(ids(table), ['t0', 't3', 't6']);
    const version = table.window(0, 10, null).version;
    assert.equal(table.setFilters({ onlyDiffering: false, search: '' }), true);
    const all = table.window(0, 10, 't4');
    assert.equal(all.length, 9);
    assert.equal(all.activeIndex, 4, 'the page’s active trace, placed in the new view');
    assert.notEqual(all.version, version, 'another membership: the page drops the rows it kept');
    table.setFilters({ onlyDiffering: false, search: 'ANSWER 6' });
    assert.deepEqual(ids(table), ['t6']);
    table.setFilters({ onlyDiffering: false, search: 'prompt 7' });
    assert.deepEqual(ids(table), ['t7']);
    table.setFilters({ ...DIFFERING_ONLY, search: 'prompt 7' });
    assert.deepEqual(ids(table), [], 't7’s answers are the same');
    // The comparison read again (Compare Runs asked anew): the filters stay, the view is rebuilt.
    const before = table.window(0, 1, null).version;
    table.load(compared(12));
    table.setFilters(DIFFERING_ONLY);
    assert.deepEqual(ids(table), ['t0', 't3', 't6', 't9']);
    assert.notEqual(table.window(0, 1, null).version, before);
  });

  it('sends a window of the rows, reading only their texts, never all 5,000', () => {
    const reads = { count: 0 };
    const table = new CompareTable();
    table.load(compared(5_000, reads));
    table.setFilters({ onlyDiffering: false, search: '' });
    const w = table.window(100, 400, null);
    assert.equal(w.length, 5_000);
    assert.equal(w.total, 5_000);
    assert.equal(w.start, 100);
    assert.equal(w.rows.length, 300);
    assert.equal(w.rows[0]![CompareRow.TraceId], 't100');
    assert.equal(w.rows[0]![CompareRow.AnswerA], 'answer 100');
    assert.equal(reads.count, 600, 'two answers per row sent');
    // A scroll of a few rows reads the texts of the rows new to the window only.
    table.window(110, 410, null);
    assert.equal(reads.count, 620);
    assert.equal(table.window(0, 100_000, null).rows.length, MAX_WINDOW);
  });
});

describe('Compare Runs table: each run’s verdict', () => {
  it('puts both runs’ verdicts in the rows, and makes a row again when its verdicts change', () => {
    const verdicts = new Map<string, 'good' | 'bad'>([['a|t1', 'good'], ['a|t0', 'bad'], ['a|t2', 'bad'], ['b|t2', 'good']]);
    const table = new CompareTable();
    table.load(compared(3), (side, id) => verdicts.get(`${side}|${id}`));
    table.setFilters({ onlyDiffering: false, search: '' });
    const row = (id: string) => table.window(0, 10, null).rows.find((r) => r[CompareRow.TraceId] === id)!;
    assert.deepEqual([row('t1')[CompareRow.VerdictA], row('t1')[CompareRow.VerdictB]], ['good', null]);
    assert.deepEqual([row('t2')[CompareRow.VerdictA], row('t2')[CompareRow.VerdictB]], ['bad', 'good']);
    // Carried over: the row is made again with the new verdict, not sent from the last window.
    verdicts.set('b|t1', 'good');
    table.changed('t1');
    assert.equal(row('t1')[CompareRow.VerdictB], 'good');
  });
});
