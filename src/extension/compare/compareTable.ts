// Compare Runs' table as the host holds it: every trace either run answered (places and digests, see
// core/compareRuns.ts), and the view its filters leave (only differing, the search), as trace ids. The page asks for
// the rows it shows; their texts are read from the journal then. No vscode import: the unit tests drive it directly.
import type { ComparedTrace, Verdict } from '../../core';
import type { CompareFilters, CompareTuple, RowWindow } from '../../webview/protocol';
import { containsQuery } from '../../webview/textMatch';
import { RowView, searchHead } from '../panels/rowView';
import { preview } from '../evaluations/treeModel';

export const DIFFERING_ONLY: Readonly<CompareFilters> = { onlyDiffering: true, search: '' };

/** A run's verdict on its answer to a trace: the session's store has them by run (TraceStore.verdictOf). */
export type VerdictLookup = (side: 'a' | 'b', traceId: string) => Verdict | undefined;

export class CompareTable {
  private rows: readonly ComparedTrace[] = [];
  private readonly byId = new Map<string, ComparedTrace>();
  private filters: CompareFilters = { ...DIFFERING_ONLY };
  private readonly view = new RowView();
  /** Whether each trace matches the search, kept until the search or the rows change. */
  private readonly searchHits = new Map<string, boolean>();
  /** The rows of the last window sent: a scroll of a few rows reads only the texts of the rows new to it. */
  private lastRows = new Map<string, CompareTuple>();
  private stale = true;
  private verdictOf: VerdictLookup = () => undefined;
  differing = 0;

  get total(): number {
    return this.rows.length;
  }

  /** The rows filtered by the page's filters. */
  get length(): number {
    this.refresh();
    return this.view.length;
  }

  /** The traces whose answers differ, in order. */
  get differingIds(): string[] {
    return this.rows.filter((r) => r.differs).map((r) => r.traceId);
  }

  /** New rows (the comparison was read again): a new version of the view. */
  load(rows: readonly ComparedTrace[], verdicts?: VerdictLookup): void {
    if (verdicts) this.verdictOf = verdicts;
    this.rows = rows;
    this.byId.clear();
    for (const r of rows) this.byId.set(r.traceId, r);
    this.differing = rows.reduce((n, r) => n + (r.differs ? 1 : 0), 0);
    this.searchHits.clear();
    this.lastRows.clear();
    this.stale = true;
  }

  get(traceId: string): ComparedTrace | undefined {
    return this.byId.get(traceId);
  }

  /** A trace's verdicts changed: its row is made again when next sent. */
  changed(traceId: string): void {
    this.lastRows.delete(traceId);
  }

  /** Returns false when these are the filters already applied. */
  setFilters(next: CompareFilters): boolean {
    const f = this.filters;
    if (f.onlyDiffering === next.onlyDiffering && f.search === next.search) return false;
    if (f.search !== next.search) this.searchHits.clear();
    this.filters = { ...next };
    this.stale = true;
    return true;
  }

  /** The view's rows from start to end (at most MAX_WINDOW), as the page gets them. */
  window(start: number, end: number, activeKey: string | null): RowWindow<CompareTuple> {
    this.refresh();
    const next = new Map<string, CompareTuple>();
    const out = this.view.window(start, end, activeKey, this.rows.length, (id) => {
      const r = this.byId.get(id);
      const row = this.lastRows.get(id) ?? (r && tuple(r, this.verdictOf));
      if (row) next.set(id, row);
      return row;
    });
    this.lastRows = next;
    return out;
  }

  private refresh(): void {
    if (!this.stale) return;
    this.stale = false;
    const { onlyDiffering, search } = this.filters;
    const lowered = search.toLowerCase();
    const keys: string[] = [];
    for (const r of this.rows) if ((!onlyDiffering || r.differs) && (!lowered || this.matches(r, lowered))) keys.push(r.traceId);
    this.view.set(keys);
  }

  /** The search reads the first SEARCH_CHARS of each text from the journal, once per search. */
  private matches(r: ComparedTrace, lowered: string): boolean {
    let hit = this.searchHits.get(r.traceId);
    if (hit === undefined) {
      hit = containsQuery(lowered, r.traceId, searchHead(r.prompt), searchHead(r.a?.answer), searchHead(r.b?.answer));
      this.searchHits.set(r.traceId, hit);
    }
    return hit;
  }
}

function tuple(r: ComparedTrace, verdictOf: VerdictLookup): CompareTuple {
  const verdict = (side: 'a' | 'b') => (r[side] ? verdictOf(side, r.traceId) ?? null : null);
  return [r.traceId, preview(r.prompt, 200), r.a ? preview(r.a.answer, 300) : null, r.b ? preview(r.b.answer, 300) : null, r.a?.latencyMs ?? null, r.b?.latencyMs ?? null, r.differs, verdict('a'), verdict('b')];
}
