// Process Details' rows as the page holds them: every row by trace id, and the view the filters, the search and
// the sort leave. Kept apart from the DOM so the page's parts only ask it what to show.
import { Row } from '../protocol';
import type { RowTuple, SortKey, VerdictFilter } from '../protocol';
import { containsQuery } from './dom';

export interface Filters {
  stateFilter: string;
  verdictFilter: VerdictFilter;
  search: string;
  sortKey: SortKey;
  sortDirection: 1 | -1;
}

const VERDICT_ORDER: Readonly<Record<string, number>> = { good: 0, bad: 1 };

export class TraceRows {
  rows: RowTuple[] = [];
  view: RowTuple[] = [];
  private index = new Map<string, number>();
  /** Where each shown trace sits in the view, built on the first update that needs it (a filter never pays). */
  private viewPos: Map<string, number> | undefined;
  private readonly stateOrder: Map<string, number>;
  private lowered: { from: string; to: string } | undefined;

  constructor(
    states: readonly string[],
    readonly filters: Filters,
  ) {
    this.stateOrder = new Map(states.map((s, i) => [s, i]));
  }

  reset(): void {
    this.rows = [];
    this.index = new Map();
  }

  add(rows: readonly RowTuple[]): void {
    for (const r of rows) {
      this.index.set(r[Row.TraceId], this.rows.length);
      this.rows.push(r);
    }
  }

  matches(r: RowTuple): boolean {
    const f = this.filters;
    if (f.stateFilter !== 'all' && r[Row.State] !== f.stateFilter) return false;
    if (f.verdictFilter !== 'all' && (r[Row.Verdict] ?? 'none') !== f.verdictFilter) return false;
    return !f.search || containsQuery(this.query(), r[Row.TraceId], r[Row.Prompt], r[Row.Answer], r[Row.Note]);
  }

  /** The search in lower case, lowered once per search rather than once per row. */
  private query(): string {
    if (this.lowered?.from !== this.filters.search) this.lowered = { from: this.filters.search, to: this.filters.search.toLowerCase() };
    return this.lowered.to;
  }

  /** Rebuilds the view: filtered, then sorted (stable: ties keep the service's list order). */
  recompute(): void {
    const view: RowTuple[] = [];
    for (const r of this.rows) if (this.matches(r)) view.push(r);
    const compare = this.comparator();
    if (compare === 'reverse') view.reverse();
    else if (compare) view.sort(compare);
    this.view = view;
    this.viewPos = undefined;
  }

  /**
   * Applies changed rows in place. Returns true when the view must be rebuilt (a row moved in or out of the
   * filters, or the order is not the list's); otherwise the view already holds the new rows at their places.
   */
  update(changed: readonly RowTuple[]): boolean {
    let reorder = this.filters.sortKey !== 'trace';
    for (const r of changed) {
      const i = this.index.get(r[Row.TraceId]);
      if (i === undefined) continue;
      if (this.matches(this.rows[i]!) !== this.matches(r)) reorder = true;
      this.rows[i] = r;
      if (reorder) continue;
      const v = this.positions().get(r[Row.TraceId]);
      if (v !== undefined) this.view[v] = r;
    }
    return reorder;
  }

  private positions(): Map<string, number> {
    if (!this.viewPos) {
      this.viewPos = new Map();
      for (let i = 0; i < this.view.length; i++) this.viewPos.set(this.view[i]![Row.TraceId], i);
    }
    return this.viewPos;
  }

  private comparator(): ((a: RowTuple, b: RowTuple) => number) | 'reverse' | null {
    const d = this.filters.sortDirection;
    switch (this.filters.sortKey) {
      case 'state':
        return (a, b) => d * ((this.stateOrder.get(a[Row.State]) ?? 0) - (this.stateOrder.get(b[Row.State]) ?? 0));
      case 'latency':
        return (a, b) => byLatency(a[Row.LatencyMs], b[Row.LatencyMs], d);
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

function verdictRank(r: RowTuple): number {
  const v = r[Row.Verdict];
  return v === null ? 2 : (VERDICT_ORDER[v] ?? 2);
}
