import assert from 'node:assert/strict';
import { LOCAL_STATES } from '../../src/core';
import { TraceStore } from '../../src/core/store/traceStore';
import { MAX_WINDOW, SEARCH_CHARS } from '../../src/extension/panels/rowView';
import { ALL_TRACES, TraceTable } from '../../src/extension/runDetails/traceTable';
import { Row } from '../../src/webview/protocol';

/** Run Details' table on the host: the page gets windows of it, so its filters and order are decided here. */
function storeOf(n: number): TraceStore {
  const store = new TraceStore();
  const items = Array.from({ length: n }, (_, i) => ({ traceId: `t${i}`, content: i % 2 ? `Odd prompt ${i}` : `Even prompt ${i}` }));
  store.apply({ t: 'prompts', at: 1, items });
  return store;
}

function follow(store: TraceStore, table: TraceTable): void {
  store.onTraceChanged((t) => table.invalidate(t?.traceId));
}

const ids = (table: TraceTable, store: TraceStore) => table.window(store, 0, MAX_WINDOW).rows.map((r) => r[Row.TraceId]);

describe('Run Details table on the host (windows of it go to the page)', () => {
  it('shows every trace in the list order; a changed row is sent fresh without a new version', () => {
    const store = storeOf(5);
    const table = new TraceTable(LOCAL_STATES);
    follow(store, table);
    assert.equal(table.refresh(store), true);
    assert.deepEqual(ids(table, store), ['t0', 't1', 't2', 't3', 't4']);
    const version = table.version;
    assert.equal(table.window(store, 2, 3).rows[0]![Row.State], 'pending');
    store.apply({ t: 'answer', id: 't2', a: 'An answer', at: 2 });
    assert.equal(table.refresh(store), false, 'the order and membership did not change');
    assert.equal(table.version, version);
    const [r] = table.window(store, 2, 3).rows;
    assert.equal(r![Row.State], 'answered');
    assert.equal(r![Row.Answer], 'An answer');
    // Traces added: a new version.
    store.apply({ t: 'prompts', at: 3, items: [...Array.from({ length: 5 }, (_, i) => ({ traceId: `t${i}`, content: 'p' })), { traceId: 't5', content: 'p' }] });
    assert.equal(table.refresh(store), true);
    assert.equal(table.length, 6);
  });

  it('filters by state, verdict and search, and rebuilds when a row leaves the filter', () => {
    const store = storeOf(6);
    const table = new TraceTable(LOCAL_STATES);
    follow(store, table);
    table.setFilters({ ...ALL_TRACES, stateFilter: 'pending' });
    table.refresh(store);
    assert.equal(table.length, 6);
    store.apply({ t: 'answer', id: 't1', a: 'x', at: 2 });
    store.apply({ t: 'submitted', id: 't1', at: 3 });
    assert.equal(table.refresh(store), true, 'a row left the filter');
    assert.deepEqual(ids(table, store), ['t0', 't2', 't3', 't4', 't5']);
    table.setFilters({ ...ALL_TRACES, search: 'ODD PROMPT' });
    table.refresh(store);
    assert.deepEqual(ids(table, store), ['t1', 't3', 't5']);
    // The whole answer is searched, not the preview the table shows (its first 120 characters).
    store.apply({ t: 'answer', id: 't4', a: `${'x'.repeat(300)} needle`, at: 2 });
    table.setFilters({ ...ALL_TRACES, search: 'Needle' });
    table.refresh(store);
    assert.deepEqual(ids(table, store), ['t4']);
    assert.ok(!table.window(store, 0, 1).rows[0]![Row.Answer].includes('needle'), 'the row shows a preview');
    // A trace that changes is searched again; past SEARCH_CHARS nothing is read, whatever a target answered.
    store.apply({ t: 'answer', id: 't2', a: `${'y'.repeat(SEARCH_CHARS - 10)} needle`, at: 3 });
    store.apply({ t: 'answer', id: 't4', a: `${'x'.repeat(SEARCH_CHARS)} needle`, at: 3 });
    table.refresh(store);
    assert.deepEqual(ids(table, store), ['t2']);
    store.apply({ t: 'verdict', id: 't3', at: 4, rating: 'bad' });
    table.setFilters({ ...ALL_TRACES, verdictFilter: 'bad' });
    table.refresh(store);
    assert.deepEqual(ids(table, store), ['t3']);
    table.setFilters({ ...ALL_TRACES, verdictFilter: 'none' });
    table.refresh(store);
    assert.equal(table.length, 5);
    assert.equal(table.setFilters({ ...ALL_TRACES, verdictFilter: 'none' }), false, 'the same filters again');
  });

  it('sorts by latency (none last, either way), by trace in reverse, and places a trace by id', () => {
    const store = storeOf(4);
    const table = new TraceTable(LOCAL_STATES);
    follow(store, table);
    store.apply({ t: 'answer', id: 't0', a: 'a', at: 2, ms: 30 });
    store.apply({ t: 'answer', id: 't2', a: 'a', at: 2, ms: 10 });
    store.apply({ t: 'answer', id: 't3', a: 'a', at: 2, ms: 20 });
    table.setFilters({ ...ALL_TRACES, sortKey: 'latency', sortDirection: -1 });
    table.refresh(store);
    assert.deepEqual(ids(table, store), ['t0', 't3', 't2', 't1']);
    table.setFilters({ ...ALL_TRACES, sortKey: 'latency', sortDirection: 1 });
    table.refresh(store);
    assert.deepEqual(ids(table, store), ['t2', 't3', 't0', 't1']);
    assert.equal(table.indexOf('t0'), 2);
    assert.equal(table.indexOf('missing'), -1);
    table.setFilters({ ...ALL_TRACES, sortDirection: -1 });
    table.refresh(store);
    assert.deepEqual(table.idsIn(0, 2), ['t3', 't2']);
  });

  it('answers at most MAX_WINDOW rows at once, and starts again on a reloaded store', () => {
    const store = storeOf(MAX_WINDOW + 500);
    const table = new TraceTable(LOCAL_STATES);
    table.refresh(store);
    assert.equal(table.window(store, 100, 100_000).rows.length, MAX_WINDOW);
    assert.equal(table.window(store, MAX_WINDOW + 400, MAX_WINDOW + 1_000).rows.length, 100);
    const reloaded = storeOf(3);
    assert.equal(table.refresh(reloaded), true);
    assert.equal(table.length, 3);
  });
});
