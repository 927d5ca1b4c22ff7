import type * as z from 'zod/mini';
import type { compareFiltersSchema, compareMessageSchema, compareStateSchema, runDetailsStateSchema, tableFiltersSchema, webviewMessageSchema } from './messageSchemas';
import type { LocalTraceState, ReportRun, StateCounts, Verdict } from '../core';

/**
 * Every message between the two webviews (Run Details, Compare Runs) and the host, and what each page saves
 * with setState for its restorer: the one protocol module both ends import. What the pages send and save is
 * typed from the schemas the host validates it with (./messageSchemas.ts), since the pages render adversarial
 * text; this module holds no code but the row indexes, so the front ends (src/webview/app/) bundle no zod.
 */

/**
 * Indexes into a RowTuple, and into a report's ReportRow (the same columns, then the run): the one column enum.
 * A const enum, so the bundles read `r[3]` while the source reads `r[Row.Answer]`.
 */
export const enum Row {
  TraceId = 0,
  State = 1,
  Prompt = 2,
  Answer = 3,
  LatencyMs = 4,
  Error = 5,
  Verdict = 6,
  Note = 7,
  /** A report's rows only. */
  RunId = 8,
}

/** One Run Details row, a tuple so 100,000 rows travel cheaply (indexed by Row). */
export type RowTuple = [
  traceId: string,
  state: LocalTraceState,
  prompt: string,
  answer: string,
  latencyMs: number | null,
  error: string | null,
  verdict: Verdict | null,
  note: string | null,
];

export type { Verdict };

/** What the latest run looks like: who answers, and its latency, tokens and errors so far (live during a run). */
export interface RunLine {
  runId: string;
  target: string;
  stats: string;
  /** What the run has cost so far, or "no cost: <why>" (the target reported no usage, no price): never a guess. */
  cost: string;
  /**
   * The run's latency histogram and answers over time, as the report draws them (src/webview/app/charts.ts). Absent:
   * the same as in the last message, which the page keeps (the host sends them only when they changed).
   */
  charts?: Pick<ReportRun, 'histogram' | 'timeline'>;
}

export interface ProgressMessage {
  type: 'progress';
  counts: StateCounts;
  total: number;
  running: boolean;
  ratePerSecond: number;
  etaSeconds: number | null;
  lastError: string | null;
  /** What is left to do that the user should know (skipped traces keep the service from completing). */
  notice: string | null;
  waiting: string | null;
  /** The run going on is paused (Pause): calls in flight finish, none starts until Resume. */
  paused: boolean;
  /** Target calls in flight at most, as the run now keeps it (null: no run going on). */
  concurrency: number | null;
  run: RunLine | null;
  /** The target is the user's own code (python, worker): rows offer Debug Trace. */
  debuggable: boolean;
}

/**
 * A window of a table the host holds (Run Details' traces, Compare Runs' traces): the rows its filters and order
 * leave, of which the page gets only those it shows (and asks for more with a 'query' as it scrolls). 100,000 rows
 * never cross to the page, so neither a first look nor a running evaluation moves megabytes through the editor.
 */
export interface RowWindow<R> {
  /** Changes whenever the table's order or membership does: rows the page kept of another version are stale. */
  version: number;
  /** The rows the filters leave, and all the table's rows. */
  length: number;
  total: number;
  /** These rows are the table's rows from `start` on. */
  start: number;
  rows: R[];
  /** Where the page's active row is now (-1: the filters hide it, or there is none). */
  activeIndex: number;
}

/** Run Details' window of its traces. */
export interface ViewMessage extends RowWindow<RowTuple> {
  type: 'view';
}

/** The table's filters and order: chosen in the page, applied by the host. */
export type TableFilters = z.infer<typeof tableFiltersSchema>;

export type HostMessage =
  | { type: 'init'; refId: string; title: string; kind: string; evaluationId: number; baseUrl: string; processDetailsUrl: string }
  | ViewMessage
  | ProgressMessage
  /** The full texts of one trace, asked for when the reviewer wants more than the preview. */
  /** `error`: why the trace failed (with a traceback of the user's code), shown with or instead of its answer. */
  | { type: 'details'; traceId: string; prompt: string; answer: string | null; note: string | null; error: string | null };

export type WebviewMessage = z.infer<typeof webviewMessageSchema>;

export type SortKey = NonNullable<RunDetailsState['sortKey']>;
export type VerdictFilter = 'all' | Verdict | 'none';

/**
 * What Run Details saves with setState, and what its restorer reads after a reload: which evaluation, and the
 * table as the user left it. Only refId is required, so a state saved by an older version still restores.
 */
export type RunDetailsState = z.infer<typeof runDetailsStateSchema>;

/** Compare Runs: one row per trace either run answered (indexed by CompareRow). */
export type CompareTuple = [
  traceId: string,
  prompt: string,
  answerA: string | null,
  answerB: string | null,
  latencyA: number | null,
  latencyB: number | null,
  differs: boolean,
  /** Each run's verdict on its own answer (a verdict stays with the run whose answer it judged). */
  verdictA: Verdict | null,
  verdictB: Verdict | null,
];

export const enum CompareRow {
  TraceId = 0,
  Prompt = 1,
  AnswerA = 2,
  AnswerB = 3,
  LatencyA = 4,
  LatencyB = 5,
  Differs = 6,
  VerdictA = 7,
  VerdictB = 8,
}

/**
 * What Compare Runs saves with setState and its restorer reads: the evaluation and the two runs (the host's part,
 * sent with every 'compare' message), the traces it was narrowed to after Rerun Traces, and the page's filters.
 */
export type CompareState = z.infer<typeof compareStateSchema>;

/** The host's part of the Compare Runs state: which comparison the page shows. */
export type ComparedRuns = Pick<CompareState, 'refId' | 'runA' | 'runB' | 'only'>;

/** Which two runs the page compares, and how many traces either answered and how many of those differ. */
export interface CompareHeader {
  type: 'compare';
  title: string;
  /** Each run's cost, or "no cost: <why>" (costText): never a guess. */
  a: { runId: string; target: string; cost: string };
  b: { runId: string; target: string; cost: string };
  total: number;
  differing: number;
  state: ComparedRuns;
}

/** Compare Runs' window of the traces its filters leave (the host filters: only differing, the search). */
export interface CompareViewMessage extends RowWindow<CompareTuple> {
  type: 'view';
}

export type CompareHostMessage = CompareHeader | CompareViewMessage;

/** Compare Runs' filters: chosen in the page, applied by the host. */
export type CompareFilters = z.infer<typeof compareFiltersSchema>;

export type CompareMessage = z.infer<typeof compareMessageSchema>;
