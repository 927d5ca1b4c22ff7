// Run Details' table as the host holds it: a row per trace (built when first asked for, rebuilt when the
// trace changes), and the view the filters, the search and the order leave, as trace ids. The page asks for the
// rows it shows; 100,000 rows never cross to it. No vscode import: the unit tests drive it directly.
import type { TraceFacts, TraceInfo, TraceStore } from '../../core';
import type { RowTuple, RowWindow, TableFilters } from '../../webview/protocol';
import { containsQuery } from '../../webview/textMatch';
import { RowView, searchHead } from '../panels/rowView';
import { preview } from '../evaluations/treeModel';

export const ALL_TRACES: Readonly<TableFilters> = { stateFilter: 'all', verdictFilter: 'all', search: '', sortKey: 'trace', sortDirection: 1 };

const VERDICT_ORDER: Readonly<Record<string, number>> = { good: 0, bad: 1 };

export class TraceTable {
  private filters: TableFilters = { ...ALL_TRACES };
  private readonly rows = new Map<string, RowTuple>();
  private readonly view = new RowView();
  private readonly stateOrder: Map<string, number>;
  private lowered = '';
  /**
   * Whether each trace matches the search, kept until the trace or the search changes: a search during a run
   * reads the texts of the traces that changed, not of all 100,000 every second.
   */
  private readonly searchHits = new Map<string, boolean>();
  /** What the view was built from: a view is rebuilt when the store, its size, or (for a filtered view) a row changed. */
  private builtFrom: { store: TraceStore; size: number } | undefined;
  private stale = true;

  constructor(states: readonly string[]) {
    this.stateOrder = new Map(states.map((s, i) => [s, i]));
  }

  get length(): number {
    return this.view.length;
  }

  /** Moves on every rebuild: the page drops rows of another version. */
  get version(): number {
    return this.view.version;
  }

  /** True when the view depends only on which traces there are (no filter, no search, the service's order). */
  get showsAll(): boolean {
    const f = this.filters;
    return f.stateFilter === 'all' && f.verdictFilter === 'all' && !f.search && f.sortKey === 'trace' && f.sortDirection === 1;
  }

  /** A trace changed (undefined: any may have): its row is rebuilt when next asked for. */
  invalidate(traceId: string | undefined): void {
    if (traceId === undefined) {
      this.rows.clear();
      this.searchHits.clear();
    } else {
      this.rows.delete(traceId);
      this.searchHits.delete(traceId);
    }
    if (traceId === undefined || !this.showsAll) this.stale = true;
  }

  /** Returns false when these are the filters already applied. */
  setFilters(next: TableFilters): boolean {
    const f = this.filters;
    if (f.stateFilter === next.stateFilter && f.verdictFilter === next.verdictFilter && f.search === next.search && f.sortKey === next.sortKey && f.sortDirection === next.sortDirection) return false;
    this.filters = { ...next };
    if (next.search !== f.search) this.searchHits.clear();
    this.lowered = next.search.toLowerCase();
    this.stale = true;
    return true;
  }

  /** Rebuilds the view when something it depends on changed; true when it did (and the version moved). */
  refresh(store: TraceStore): boolean {
    const from = this.builtFrom;
    if (!this.stale && from?.store === store && from.size === store.traces.size) return false;
    if (from?.store !== store) this.invalidate(undefined);
    this.builtFrom = { store, size: store.traces.size };
    this.stale = false;
    this.rebuild(store);
    return true;
  }

  /**
   * The view's rows from start to end (at most MAX_WINDOW), as the page gets them; `told`: a trace's row as a followed
   * run's runner told it, ahead of the store's.
   */
  window(store: TraceStore, start: number, end: number, activeKey: string | null = null, told?: (traceId: string) => TraceFacts | undefined): RowWindow<RowTuple> {
    // The view is rebuilt before any window is read, so every id is in the store.
    return this.view.window(start, end, activeKey, store.traces.size, (id) => {
      const facts = told?.(id);
      if (facts) return row(facts);
      const t = store.get(id);
      return t && this.rowOf(t);
    });
  }

  /** The page's window from rows a followed run told by place (see FollowedRows.placed): the store need not know them. */
  placedWindow(placed: { start: number; total: number; traces: readonly TraceFacts[] }, activeKey: string | null): RowWindow<RowTuple> {
    const at = activeKey === null ? -1 : placed.traces.findIndex((t) => t.traceId === activeKey);
    return { version: this.version, length: placed.total, total: placed.total, start: placed.start, rows: placed.traces.map(row), activeIndex: at < 0 ? -1 : placed.start + at };
  }

  /** The view's ids from `start` to `end`. */
  idsIn(start: number, end: number): string[] {
    return this.view.keysIn(start, end);
  }

  /** Where a trace sits in the view (-1: not in it). */
  indexOf(traceId: string): number {
    return this.view.indexOf(traceId);
  }

  rowOf(t: TraceInfo): RowTuple {
    let r = this.rows.get(t.traceId);
    if (!r) {
      r = row(t);
      this.rows.set(t.traceId, r);
    }
    return r;
  }

  /** Filters and sorts the traces themselves: rows (previews) are built only for the window the page shows. */
  private rebuild(store: TraceStore): void {
    if (this.showsAll) {
      this.view.set([...store.traces.keys()]);
      return;
    }
    const shown: TraceInfo[] = [];
    for (const t of store.traces.values()) if (this.matches(t)) shown.push(t);
    const compare = this.comparator();
    if (compare === 'reverse') shown.reverse();
    else if (compare) shown.sort(compare);
    this.view.set(shown.map((t) => t.traceId));
  }

  private matches(t: TraceInfo): boolean {
    const f = this.filters;
    if (f.stateFilter !== 'all' && t.state !== f.stateFilter) return false;
    if (f.verdictFilter !== 'all' && (t.rating ?? 'none') !== f.verdictFilter) return false;
    if (!f.search) return true;
    let hit = this.searchHits.get(t.traceId);
    if (hit === undefined) {
      // More than the previews the table shows (a match past the 120th character is found), at most SEARCH_CHARS.
      hit = containsQuery(this.lowered, t.traceId, searchHead(t.prompt), searchHead(t.answer), searchHead(t.note));
      this.searchHits.set(t.traceId, hit);
    }
    return hit;
  }

  private comparator(): ((a: TraceInfo, b: TraceInfo) => number) | 'reverse' | null {
    const d = this.filters.sortDirection;
    switch (this.filters.sortKey) {
      case 'state':
        return (a, b) => d * ((this.stateOrder.get(a.state) ?? 0) - (this.stateOrder.get(b.state) ?? 0));
      case 'latency':
        return (a, b) => byLatency(a.latencyMs ?? null, b.latencyMs ?? null, d);
      case 'verdict':
        return (a, b) => d * (verdictRank(a) - verdictRank(b));
      case 'trace':
        return d > 0 ? null : 'reverse';
    }
  }
}

/** Traces without a latency last, whichever the direction. */
function byLatency(a: number | null, b: number | null, d: 1 | -1): number {
  if (a === null) return b === null ? 0 : 1;
  return b === null ? -1 : d * (a - b);
}

function verdictRank(t: TraceInfo): number {
  return t.rating === undefined ? 2 : (VERDICT_ORDER[t.rating] ?? 2);
}

function row(t: TraceFacts): RowTuple {
  return [
    t.traceId,
    t.state,
    preview(t.prompt, 120),
    preview(t.answer, 120),
    t.latencyMs ?? null,
    t.error ?? null,
    t.rating ?? null,
    t.note ? preview(t.note, 200) : null,
  ];
}
