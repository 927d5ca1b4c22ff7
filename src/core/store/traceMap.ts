import type { Trace, TraceRows } from './traceRows';

/** The store's traces by id, read like a Map: views over the rows, made when first asked for. */
export class TraceMap {
  constructor(private readonly rows: TraceRows) {}

  get size(): number {
    return this.rows.n;
  }

  get(traceId: string): Trace | undefined {
    const i = this.rows.row(traceId);
    return i === undefined ? undefined : this.rows.view(i);
  }

  /** A trace by id, its view not kept (the kept one if there is one): a look that a 600,000-trace list makes once each. */
  peek(traceId: string): Trace | undefined {
    const i = this.rows.row(traceId);
    return i === undefined ? undefined : this.rows.peek(i);
  }

  /** The trace in row i, the list's order (undefined past the last), its view not kept: see TraceRows.peek. */
  at(i: number): Trace | undefined {
    return i >= 0 && i < this.rows.n ? this.rows.peek(i) : undefined;
  }

  has(traceId: string): boolean {
    return this.rows.row(traceId) !== undefined;
  }

  values(): IterableIterator<Trace> {
    return this.rows.values();
  }

  /** The ids in the list's order; from `start` up to `end` when given (Run Details' rows by place). */
  *keys(start = 0, end = this.rows.n): IterableIterator<string> {
    for (let i = Math.max(0, start), last = Math.min(end, this.rows.n); i < last; i++) yield this.rows.c.id[i]!;
  }
}
