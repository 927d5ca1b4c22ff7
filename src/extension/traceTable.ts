// Process Details' table as the host holds it: a row per trace (built when first asked for, rebuilt when the
// trace changes), and the view the filters, the search and the order leave, as trace ids. The page asks for the
// rows it shows; 100,000 rows never cross to it. No vscode import: the unit tests drive it directly.
import type { TraceInfo, TraceStore } from '../core';
import type { RowTuple, TableFilters } from '../webview/protocol';
import { containsQuery } from '../webview/textMatch';
import { preview } from './treeModel';

export const ALL_TRACES: Readonly<TableFilters> = { stateFilter: 'all', verdictFilter: 'all', search: '', sortKey: 'trace', sortDirection: 1 };
/** The most rows one answer carries: a page asks for what it shows and a margin. */
export const MAX_WINDOW = 2_000;
/** How much of each text the search reads: well past the previews, yet bounded whatever a target answers. */
export const SEARCH_CHARS = 1_000;

const VERDICT_ORDER: Readonly<Record<string, number>> = { good: 0, bad: 1 };

export class TraceTable {
  private filters: TableFilters = { ...ALL_TRACES };
  private readonly rows = new Map<string, RowTuple>();
  private view: string[] = [];
  private positions: Map<string, number> | undefined;
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
  /** Bumped on every rebuild: the page drops rows of another version. */
  version = 0;

  constructor(states: readonly string[]) {
    this.stateOrder = new Map(states.map((s, i) => [s, i]));
  }

  get length(): number {
    return this.view.length;
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
    this.version++;
    return true;
  }

  /** The view's rows from start to end (at most MAX_WINDOW). */
  window(store: TraceStore, start: number, end: number): RowTuple[] {
    const out: RowTuple[] = [];
    const last = Math.min(this.view.length, end, start + MAX_WINDOW);
    for (let i = start; i < last; i++) {
      const t = store.get(this.view[i]!);
      // The view is rebuilt before any window is read, so every id is in the store; were one not, the rows stop
      // there rather than shift the rest out of their places.
      if (!t) break;
      out.push(this.rowOf(t));
    }
    return out;
  }

  /** The view's ids from `start` to `end`. */
  idsIn(start: number, end: number): string[] {
    return this.view.slice(start, end);
  }

  /** Where a trace sits in the view (-1: not in it). */
  indexOf(traceId: string): number {
    if (!this.positions) {
      this.positions = new Map();
      for (let i = 0; i < this.view.length; i++) this.positions.set(this.view[i]!, i);
    }
    return this.positions.get(traceId) ?? -1;
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
    this.positions = undefined;
    if (this.showsAll) {
      this.view = [...store.traces.keys()];
      return;
    }
    const shown: TraceInfo[] = [];
    for (const t of store.traces.values()) if (this.matches(t)) shown.push(t);
    const compare = this.comparator();
    if (compare === 'reverse') shown.reverse();
    else if (compare) shown.sort(compare);
    this.view = shown.map((t) => t.traceId);
  }

  private matches(t: TraceInfo): boolean {
    const f = this.filters;
    if (f.stateFilter !== 'all' && t.state !== f.stateFilter) return false;
    if (f.verdictFilter !== 'all' && (t.rating ?? 'none') !== f.verdictFilter) return false;
    if (!f.search) return true;
    let hit = this.searchHits.get(t.traceId);
    if (hit === undefined) {
      // More than the previews the table shows (a match past the 120th character is found), at most SEARCH_CHARS.
      hit = containsQuery(this.lowered, t.traceId, head(t.prompt), head(t.answer), head(t.note));
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

function head(text: string | undefined): string | null {
  if (text === undefined) return null;
  return text.length > SEARCH_CHARS ? text.slice(0, SEARCH_CHARS) : text;
}

/** Traces without a latency last, whichever the direction. */
function byLatency(a: number | null, b: number | null, d: 1 | -1): number {
  if (a === null) return b === null ? 0 : 1;
  return b === null ? -1 : d * (a - b);
}

function verdictRank(t: TraceInfo): number {
  return t.rating === undefined ? 2 : (VERDICT_ORDER[t.rating] ?? 2);
}

function row(t: TraceInfo): RowTuple {
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
