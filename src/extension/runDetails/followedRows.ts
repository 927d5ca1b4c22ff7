// Run Details of a run followed in its runner: what the runner says of the rows shown and of the run's figures, asked
// once a second, so the window need not read the run's journal meanwhile (a 100,000-trace run's records cost the
// extension host about a second of CPU to read, on a machine whose cores the run already takes). No vscode import:
// the unit tests drive it directly.
import type { FollowedView, RunFigures, TraceFacts, ViewRows } from '../../core';
import type { RunLine } from '../../webview/protocol';

/** Rows the runner told by their places in its list: the table's rows from `start` on (asked up to `end`), of `total`. */
export interface PlacedRows {
  start: number;
  end: number;
  total: number;
  traces: TraceFacts[];
}

export class FollowedRows {
  private facts = new Map<string, TraceFacts>();
  private figures: RunFigures | null | undefined;
  private rows: PlacedRows | undefined;
  /** The runner's last answer was none (a run that does not tell its view, a runner gone). */
  private refused = false;

  /** The runner answered the last ask: the rows and figures shown are its. */
  get answers(): boolean {
    return this.figures !== undefined;
  }

  /** The run's figures as the runner last told them (undefined: it did not; null: the run has no record yet). */
  get run(): RunFigures | null | undefined {
    return this.figures;
  }

  /** The runner's last answer was none: the window reads the journal for the rows instead. */
  get refusedAsk(): boolean {
    return this.refused;
  }

  /** The rows the runner last told by place (undefined: none asked so, or it could not say). */
  get placed(): PlacedRows | undefined {
    return this.rows;
  }

  /** A trace's row as the runner last told it (undefined: not asked for, or not told). */
  readonly factsOf = (traceId: string): TraceFacts | undefined => this.facts.get(traceId);

  /**
   * Takes the runner's answer to an ask by ids or by `rows` (undefined: it gave none); true when a row it told changed
   * since the last one, or (by place) where they sit.
   */
  take(view: FollowedView | undefined, rows?: ViewRows): boolean {
    if (!view || !Array.isArray(view.traces) || (rows && typeof view.total !== 'number')) {
      this.clear();
      this.refused = true;
      return false;
    }
    this.refused = false;
    this.figures = view.run ?? null;
    const was = this.rows;
    this.rows = rows && { start: rows.start, end: rows.end, total: view.total!, traces: view.traces };
    let changed = view.traces.length !== this.facts.size || was?.start !== this.rows?.start || was?.end !== this.rows?.end || was?.total !== this.rows?.total;
    const next = new Map<string, TraceFacts>();
    for (const t of view.traces) {
      const was = this.facts.get(t.traceId);
      if (!was || !sameFacts(was, t)) changed = true;
      next.set(t.traceId, t);
    }
    this.facts = next;
    return changed;
  }

  clear(): void {
    this.facts.clear();
    this.figures = undefined;
    this.rows = undefined;
    this.refused = false;
  }

  /**
   * Whether the window must read the journal for what Run Details shows: when the runner did not tell the rows (by
   * their places in its list, which the window need not know) and the figures, or the table shows other than every
   * trace in the service's order (a filter or another order needs every trace's state). Before its first answer the
   * runner is taken at its word: a read then would parse the run's whole list for a panel that asks it in a second.
   */
  needsJournal(showsAll: boolean): boolean {
    return this.refused || !showsAll;
  }
}

function sameFacts(a: TraceFacts, b: TraceFacts): boolean {
  return a.state === b.state && a.latencyMs === b.latencyMs && a.answer === b.answer && a.error === b.error && a.rating === b.rating && a.note === b.note && a.prompt === b.prompt;
}

/**
 * The charts of the progress messages Run Details gets: left out of a message when the page has them already (the
 * page keeps the last ones), so a run's charts cross to the page and are drawn only when they changed; while the run
 * goes on, that is at most every CHARTS_DURING_RUN_MS, the pace at which the core works them out (FiguresCache).
 */
export class SentCharts {
  private last = '';

  /** The line to send: without its charts when they are the ones last sent. */
  strip(line: RunLine | null): RunLine | null {
    // The page clears its charts on a line with no run: the next charts are new to it.
    if (!line) this.last = '';
    if (!line?.charts) return line;
    const key = `${line.runId}|${JSON.stringify(line.charts)}`;
    if (key !== this.last) {
      this.last = key;
      return line;
    }
    const { charts: _sent, ...rest } = line;
    return rest;
  }

  /** A new page has no charts: the next line sends them. */
  reset(): void {
    this.last = '';
  }
}
