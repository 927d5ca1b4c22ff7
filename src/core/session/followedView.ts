// What Run Details shows of a run: its figures and charts, and its traces' rows. Built here once, from a store, by the
// window for a run it reads from the journal and by a runner for the run it hosts: a window that follows a run in a
// runner asks it for these (the protocol's `view`) rather than reading the run's journal each second.
import { costText } from '../cost/runCost';
import type { ReportRun } from '../report/reportTypes';
import { runCharts } from '../report/reportData';
import { describeStats, runStats } from '../report/runStats';
import { holdText, windowsText } from '../run/progressText';
import { steersText } from '../run/steerText';
import type { RunInfo } from '../store/runHistory';
import type { TraceInfo } from '../store/traceRows';
import type { TraceStore } from '../store/traceStore';

/** The latest run's figures: who answers, its latency, tokens and errors so far, its cost and its charts. */
export interface RunFigures {
  runId: string;
  target: string;
  stats: string;
  /** What the run has cost so far, or "no cost: <why>" (costText): never a guess. */
  cost: string;
  charts: Pick<ReportRun, 'histogram' | 'timeline'>;
}

/** A trace as a row shows it: its texts as previews (PREVIEW_CHARS, a note NOTE_PREVIEW_CHARS), never whole. */
export type TraceFacts = Pick<TraceInfo, 'traceId' | 'state' | 'prompt' | 'answer' | 'latencyMs' | 'error' | 'rating' | 'note'>;

/** What a followed run says of itself for Run Details: its figures (null: no run yet) and the traces asked for. */
export interface FollowedView {
  run: RunFigures | null;
  /** The traces asked for that the run knows, in the order asked (by `rows`: the run's list from `start` on). */
  traces: TraceFacts[];
  /** Asked by `rows`: how many traces the run knows (its list's length so far). */
  total?: number;
}

/** Rows of Run Details' table in the service's order, by place: asked of a run when the window does not know its list. */
export interface ViewRows {
  start: number;
  end: number;
}

/** A run of an evaluation in another process, as a session follows it: Cancel reaches it; it may tell its view. */
export interface FollowedRemote {
  cancel(hard: boolean): void;
  view?(ids: string[], rows?: ViewRows): Promise<FollowedView | undefined>;
}

/** A row's prompt and answer, and a note's, at most this long. */
export const PREVIEW_CHARS = 120;
export const NOTE_PREVIEW_CHARS = 200;
/**
 * The rows a view is asked for at most: as many as the page's window of the table (the extension's MAX_WINDOW), so
 * no row the page shows is left to the window's store, which a followed run does not read.
 */
export const MAX_VIEW_IDS = 2_000;

/** A text on one line, cut to `max` characters with an ellipsis. */
export function preview(text: string | undefined, max = 80): string {
  if (!text) return '';
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A run's figures and charts (or `charts` as given), as Run Details shows them; the run's history says what happened to it. */
export function runFigures(run: RunInfo, charts?: RunFigures['charts']): RunFigures {
  const stats = runStats(run);
  // The service down, a pause for a token, windows that reattached, pauses and concurrency set from outside.
  const history = [describeStats(stats, { cost: false }), ...(run.holds ?? []).map(holdText), windowsText(run.windows), steersText(run.steers)].filter(Boolean).join(' · ');
  return { runId: run.runId, target: run.target, stats: history, cost: costText(stats.cost), charts: charts ?? runCharts(run, stats.latencyMs?.max) };
}

/** While a run goes on, its figures' words are worked out again at most this often: each of Run Details' asks, once a second, finds new ones. */
export const FIGURES_DURING_RUN_MS = 900;
/**
 * While a run goes on, its charts are worked out again at most this often: they cost the most to work out (two thirds of
 * the 12–40 ms of a 100,000-answer run's figures), and each change is a new SVG Run Details' page lays out.
 */
export const CHARTS_DURING_RUN_MS = 3000;

/**
 * A run's figures as last worked out: again only when they changed (figuresKey), and while the run goes on at most at
 * the paces above; a run that ended gets its exact ones at once. One cache for the runner's answers to `view` and the
 * window's own Run Details.
 */
export class FiguresCache {
  private last: { key: string; at: number; chartsKey: string; chartsAt: number; figures: RunFigures } | undefined;

  of(run: RunInfo, running: boolean, now = Date.now()): RunFigures {
    const key = figuresKey(run);
    const last = this.last?.figures.runId === run.runId ? this.last : undefined;
    const chartsDue = !last || !running || now - last.chartsAt >= CHARTS_DURING_RUN_MS;
    // Charts kept from an earlier key are worked out again once due, though the key stays (a paused run's).
    if (last?.key === key && (last.chartsKey === key || !chartsDue)) return last.figures;
    if (last && running && last.key !== key && now - last.at < FIGURES_DURING_RUN_MS) return last.figures;
    const kept = chartsDue ? undefined : last;
    const figures = runFigures(run, kept?.figures.charts);
    this.last = { key, at: now, chartsKey: kept?.chartsKey ?? key, chartsAt: kept?.chartsAt ?? now, figures };
    return figures;
  }
}

/** What changes a run's figures: they are computed again only when this does. */
export function figuresKey(run: RunInfo): string {
  return `${run.runId}|${run.answered}|${run.failed}|${run.lastAnswerAt ?? ''}|${run.endedAt ?? ''}|${run.windows?.attached ?? 0}|${run.windows?.detached ?? 0}|${run.steers?.length ?? 0}|${run.holds?.length ?? 0}`;
}

/** A trace's row facts, its texts cut to previews (a preview of a preview is the same preview). */
export function traceFacts(t: TraceFacts): TraceFacts {
  return {
    traceId: t.traceId,
    state: t.state,
    prompt: preview(t.prompt, PREVIEW_CHARS),
    answer: preview(t.answer, PREVIEW_CHARS),
    latencyMs: t.latencyMs,
    error: t.error,
    rating: t.rating,
    note: t.note ? preview(t.note, NOTE_PREVIEW_CHARS) : undefined,
  };
}

/**
 * The view of these traces in a store (the first MAX_VIEW_IDS) or, by `rows`, of those at these places of its list,
 * with its latest run's figures as `figures` gives them.
 */
export function followedView(store: TraceStore, ids: readonly string[], figures: (run: RunInfo) => RunFigures = runFigures, rows?: ViewRows): FollowedView {
  const traces: TraceFacts[] = [];
  for (const id of rows ? idsAt(store, rows) : ids.slice(0, MAX_VIEW_IDS)) {
    const t = store.get(id);
    if (t) traces.push(traceFacts(t));
  }
  const run = store.currentRun;
  return { run: run ? figures(run) : null, traces, ...(rows ? { total: store.traces.size } : {}) };
}

/** The ids at these places of a store's list (its traces in the service's order), at most MAX_VIEW_IDS. */
function idsAt(store: TraceStore, rows: ViewRows): IterableIterator<string> {
  const start = Math.max(0, Math.floor(rows.start));
  return store.traces.keys(start, Math.min(Math.floor(rows.end), start + MAX_VIEW_IDS));
}

/**
 * The protocol's `view` of the run a process hosts (a runner's, a listening CLI run's), from its store: its figures
 * as FiguresCache works them out, whichever windows ask.
 */
export function hostedView(store: () => TraceStore): (ids: readonly string[], rows?: ViewRows) => FollowedView {
  const figures = new FiguresCache();
  return (ids, rows) => followedView(store(), ids, (run) => figures.of(run, run.endedAt === undefined), rows);
}
