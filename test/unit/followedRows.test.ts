import assert from 'node:assert/strict';
import { FiguresCache, followedView, LOCAL_STATES, MAX_VIEW_IDS, runFigures } from '../../src/core';
import { CHARTS_DURING_RUN_MS, FIGURES_DURING_RUN_MS } from '../../src/core/session/followedView';
import { TraceStore } from '../../src/core/store/traceStore';
import { MAX_WINDOW } from '../../src/extension/panels/rowView';
import { FollowedRows, SentCharts } from '../../src/extension/runDetails/followedRows';
import { TraceTable } from '../../src/extension/runDetails/traceTable';
import { Row } from '../../src/webview/protocol';
import type { RunLine } from '../../src/webview/protocol';

/** A store that has listed `n` prompts and started a run, as a runner's does. */
function runningStore(n: number): TraceStore {
  const store = new TraceStore();
  store.apply({ t: 'prompts', at: 1, items: Array.from({ length: n }, (_, i) => ({ traceId: `t${i}`, content: `Prompt   ${i}\n${'x'.repeat(200)}` })) });
  store.apply({ t: 'run', run: 'r1', at: 10, target: 'echo' });
  return store;
}

describe("Run Details of a run in its runner: the runner's rows and figures, the charts sent when they changed", () => {
  it("a followed run's rows are the runner's, ahead of the window's store, previews as the store's would be", () => {
    const runner = runningStore(3);
    runner.apply({ t: 'answer', id: 't1', a: `An   answer\n${'y'.repeat(300)}`, at: 20, run: 'r1', ms: 7 });
    const window = runningStore(3);
    const table = new TraceTable(LOCAL_STATES);
    table.refresh(window);
    const followed = new FollowedRows();
    assert.equal(followed.take(followedView(runner, ['t0', 't1', 'nope'])), true, 'the first answer changes the rows');
    assert.deepEqual(followed.run, runFigures(runner.currentRun!));
    const told = table.window(window, 0, MAX_WINDOW, null, followed.factsOf).rows;
    const own = table.window(runner, 0, MAX_WINDOW).rows;
    assert.deepEqual(told.slice(0, 2), own.slice(0, 2), "the rows told are the runner's store's rows");
    assert.equal(told[1]![Row.State], 'answered');
    assert.equal(told[2]![Row.State], 'pending', 'a row not told is the window store\'s');
    assert.equal(followed.take(followedView(runner, ['t0', 't1'])), false, 'the same rows again: nothing to send');
    runner.apply({ t: 'submitted', id: 't1', at: 30 });
    assert.equal(followed.take(followedView(runner, ['t0', 't1'])), true, 'a row told changed');
    followed.take(undefined);
    assert.equal(followed.answers, false, 'a runner that could not say: the window reads the journal');
  });

  it("a followed run's rows by their places in its list, which the window need not know: the journal read only for a filter or an order", () => {
    const runner = runningStore(5);
    runner.apply({ t: 'answer', id: 't2', a: 'two', at: 20, run: 'r1', ms: 7 });
    const followed = new FollowedRows();
    assert.equal(followed.needsJournal(true), false, 'the runner not asked yet: taken at its word');
    const rows = { start: 1, end: 3 };
    assert.equal(followed.take(followedView(runner, [], runFigures, rows), rows), true);
    assert.equal(followed.needsJournal(true), false, "the runner tells the rows: the window's store knows nothing of the run, and need not");
    assert.equal(followed.needsJournal(false), true, 'a filter or an order needs every trace');
    // The rows are the ones the runner's own table would show there.
    const own = new TraceTable(LOCAL_STATES);
    own.refresh(runner);
    const window = new TraceTable(LOCAL_STATES);
    window.refresh(new TraceStore());
    const told = window.placedWindow(followed.placed!, 't2');
    const mine = own.window(runner, 1, 3, 't2');
    assert.deepEqual([told.rows, told.start, told.length, told.activeIndex], [mine.rows, mine.start, mine.length, mine.activeIndex]);
    assert.equal(told.rows[1]![Row.State], 'answered');
    assert.equal(followed.take(followedView(runner, [], runFigures, rows), rows), false, 'the same rows again: nothing to send');
    const later = { start: 2, end: 4 };
    assert.equal(followed.take(followedView(runner, [], runFigures, later), later), true, 'the page scrolled: new places');
    const tail = { start: 2, end: 40 };
    followed.take(followedView(runner, [], runFigures, tail), tail);
    const wider = { start: 2, end: 50 };
    assert.equal(followed.take(followedView(runner, [], runFigures, wider), wider), true, 'another window of the same rows (a sort undone): told, so the page gets its answer');
    assert.equal(followed.take({ run: null, traces: [] }, rows), false, 'an answer without its count (a runner of before)');
    assert.equal(followed.answers, false, 'is no answer');
    assert.equal(followed.needsJournal(true), true, 'the window reads the journal');
    followed.take(undefined);
    assert.equal(followed.needsJournal(true), true, 'nor is a failed ask');
    followed.clear();
    assert.equal(followed.needsJournal(true), false, "the next run's runner is asked first");
    assert.ok(MAX_VIEW_IDS >= MAX_WINDOW, 'every row a page shows is asked of the runner');
  });

  it('a chart unchanged is not sent again; a changed one, another run\'s, or a new page\'s is', () => {
    const sent = new SentCharts();
    const charts = { histogram: { edges: [0, 1], counts: [1] }, timeline: { startMs: 0, binMs: 10, answers: [1], errors: [0], limited: [0] } };
    const line: RunLine = { runId: 'r1', target: 'echo', stats: 'p50 1 ms', cost: 'no cost', charts };
    assert.deepEqual(sent.strip(line), line);
    const again = sent.strip({ ...line, stats: 'p50 2 ms', charts: structuredClone(charts) });
    assert.equal(again && 'charts' in again, false, 'the same charts are left out');
    assert.equal(again?.stats, 'p50 2 ms', 'the figures go on');
    const more = { ...charts, timeline: { ...charts.timeline, answers: [2] } };
    assert.deepEqual(sent.strip({ ...line, charts: more })?.charts, more, 'changed charts are sent');
    assert.deepEqual(sent.strip({ ...line, runId: 'r2', charts: more })?.charts, more, "another run's charts are sent");
    sent.reset();
    assert.deepEqual(sent.strip({ ...line, runId: 'r2', charts: more })?.charts, more, 'a new page gets them');
    assert.equal(sent.strip(null), null);
    assert.deepEqual(sent.strip({ ...line, runId: 'r2', charts: more })?.charts, more, 'a page that cleared its charts (no run) gets them again');
  });

  it("a running run's figures are worked out each second, its charts every few seconds, its end's at once", () => {
    const store = runningStore(5);
    const cache = new FiguresCache();
    const answer = (i: number) => store.apply({ t: 'answer', id: `t${i}`, a: 'ok', at: 20 + i, run: 'r1', ms: 10 * (i + 1) });
    answer(0);
    const first = cache.of(store.currentRun!, true, 0);
    assert.deepEqual(first, runFigures(store.currentRun!), 'the first figures are the run\'s');
    answer(1);
    assert.equal(cache.of(store.currentRun!, true, FIGURES_DURING_RUN_MS - 1), first, 'a moment later: the same figures');
    const words = cache.of(store.currentRun!, true, FIGURES_DURING_RUN_MS);
    assert.equal(words.stats, runFigures(store.currentRun!).stats, 'a second on: the words are new');
    assert.equal(words.charts, first.charts, 'the charts are not worked out again yet');
    assert.deepEqual(cache.of(store.currentRun!, true, CHARTS_DURING_RUN_MS), runFigures(store.currentRun!), 'nothing new since (a paused run): the charts catch up all the same');
    answer(2);
    assert.deepEqual(cache.of(store.currentRun!, true, 2 * CHARTS_DURING_RUN_MS), runFigures(store.currentRun!), 'a few seconds on: the charts too');
    answer(3);
    assert.deepEqual(cache.of(store.currentRun!, false, 2 * CHARTS_DURING_RUN_MS + 1), runFigures(store.currentRun!), "a run that stopped: its exact figures at once");
    const other = runningStore(5);
    other.apply({ t: 'run', run: 'r2', at: 40, target: 'echo' });
    assert.equal(cache.of(other.currentRun!, true, 2 * CHARTS_DURING_RUN_MS + 2).runId, 'r2', "another run's at once");
  });
});
