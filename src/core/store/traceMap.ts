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

  has(traceId: string): boolean {
    return this.rows.row(traceId) !== undefined;
  }

  values(): IterableIterator<Trace> {
    return this.rows.values();
  }

  *keys(): IterableIterator<string> {
    for (let i = 0; i < this.rows.n; i++) yield this.rows.c.id[i]!;
  }
}
