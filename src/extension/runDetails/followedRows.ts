// Run Details of a run followed in its runner: what the runner says of the rows shown and of the run's figures, asked
// once a second, so the window need not read the run's journal meanwhile (a 100,000-trace run's records cost the
// extension host about a second of CPU to read, on a machine whose cores the run already takes). No vscode import:
// the unit tests drive it directly.
import type { FollowedView, RunFigures, RunProgress, TraceFacts, TraceStore } from '../../core';
import type { RunLine } from '../../webview/protocol';

export class FollowedRows {
  private facts = new Map<string, TraceFacts>();
  private figures: RunFigures | null | undefined;

  /** The runner answered the last ask: the rows and figures shown are its. */
  get answers(): boolean {
    return this.figures !== undefined;
  }

  /** The run's figures as the runner last told them (undefined: it did not; null: the run has no record yet). */
  get run(): RunFigures | null | undefined {
    return this.figures;
  }

  /** A trace's row as the runner last told it (undefined: not asked for, or not told). */
  readonly factsOf = (traceId: string): TraceFacts | undefined => this.facts.get(traceId);

  /** Takes the runner's answer (undefined: it gave none); true when a row it told changed since the last one. */
  take(view: FollowedView | undefined): boolean {
    if (!view || !Array.isArray(view.traces)) {
      this.clear();
      return false;
    }
    this.figures = view.run ?? null;
    let changed = view.traces.length !== this.facts.size;
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
  }

  /**
   * Whether the window must still read the journal for what Run Details shows: unless the runner tells the rows and
   * figures, the table shows every trace in the service's order (a filter or another order needs every trace's
   * state), and the store knows the run's traces (their ids come from the journal's prompt list). A store that holds
   * an earlier run has that run's list: as many traces proves nothing when the ids changed since, so it must first read
   * this run's record, which is journaled after its whole list.
   */
  needsJournal(showsAll: boolean, store: TraceStore, progress: RunProgress | undefined): boolean {
    if (!this.answers || !showsAll || !progress || progress.phase === 'listing') return true;
    const before = store.currentRun;
    if (before && before.runId !== this.figures?.runId) return true;
    return store.traces.size === 0 || store.traces.size < progress.total;
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
