/**
 * A store's rows by trace id, made at the first lookup: a store opened from its index for a `status` or an export
 * never looks a trace up by id, and 100,000 ids in a Map (with the tables it outgrew on the way) were some 5 MB of
 * that status's peak RSS.
 */
export class RowsById {
  private map: Map<string, number> | undefined;

  /** `ids`: every row's id in row order, read at the first lookup; rows added after it are set one by one. */
  constructor(private readonly ids: () => readonly string[]) {}

  get(traceId: string): number | undefined {
    return this.built().get(traceId);
  }

  set(traceId: string, row: number): void {
    this.built().set(traceId, row);
  }

  private built(): Map<string, number> {
    if (this.map) return this.map;
    const map = new Map<string, number>();
    const ids = this.ids();
    for (let i = 0; i < ids.length; i++) map.set(ids[i]!, i);
    return (this.map = map);
  }
}
