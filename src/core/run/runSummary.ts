// How a run ends: its outcome and the summary the CLI, the runner and the editor report.
import { ApiError, AuthError, NotReadyError, isAbortError } from '../../api/errors';
import type { BatchSummary } from './batchRun';
import type { ListChanges } from './runList';
import type { RunOutcome, RunState, StopReason } from './runState';
import type { HoldEvent } from './serviceHold';
import type { StateCounts, TraceStore } from '../store/traceStore';

export interface RunSummary {
  outcome: RunOutcome;
  /** One sentence for the user when the outcome is not plain success. */
  message: string | undefined;
  total: number;
  counts: StateCounts;
  submittedNow: number;
  targetCalls: number;
  /** Target calls answered with a rate limit (each retried after its Retry-After). */
  rateLimitedCalls: number;
  failed: Array<{ traceId: string; reason: string }>;
  durationMs: number;
  /** Time spent handling traces (after the prompts came). */
  runningMs: number;
  error: unknown;
  /** The run's id when it had work to do and was recorded. */
  runId: string | undefined;
  /** What the run set out to do: traces sent to the target, those --limit left for later, answers resubmitted. */
  planned: { callTarget: number; wanted: number; submitFirst: number };
  /** The list read again at the end differed from the first: traces that appeared (run) and vanished (reported). */
  listChanges?: ListChanges;
  /** When submissions were held: the service down, or a token refused until a new one came. */
  holds: HoldEvent[];
  /** The Batch API's part (batch: true). */
  batch?: BatchSummary;
}

/** What the engine knows of a run at its end. */
export interface RunEnd {
  outcome: RunOutcome;
  stop: StopReason | undefined;
  failed: RunSummary['failed'];
  store: TraceStore;
  run: RunState;
  runId: string | undefined;
  planned: RunSummary['planned'];
  listChanges: ListChanges | undefined;
  holds: HoldEvent[];
  batch: BatchSummary | undefined;
}

export function summarize(end: RunEnd): RunSummary {
  const { outcome, stop, failed, store, run } = end;
  // Answers journaled and not submitted, when the service or the token stopped the run: the next run sends them.
  const waiting = outcome === 'auth' || outcome === 'unreachable' ? store.counts.answered : 0;
  const waitingNote = waiting ? ` ${waiting} answer(s) are journaled and waiting; run again once that is mended: they are submitted without calling the target again.` : '';
  return {
    outcome,
    message: stop?.message ? stop.message + waitingNote : (failed.length ? `${failed.length} trace(s) failed; run again to retry them (journaled answers are not recomputed).` : undefined),
    total: store.total,
    counts: store.snapshotCounts(),
    submittedNow: run.submittedNow,
    targetCalls: run.targetCalls,
    rateLimitedCalls: run.rateLimited,
    failed,
    durationMs: Date.now() - run.started,
    runningMs: run.runningSince ? Date.now() - run.runningSince : 0,
    error: stop?.error,
    runId: end.runId,
    planned: end.planned,
    ...(end.listChanges ? { listChanges: end.listChanges } : {}),
    holds: end.holds,
    ...(end.batch ? { batch: end.batch } : {}),
  };
}

/** The outcome of a run that failed before any trace was handled (the list could not be read). */
export function classifyFatal(error: unknown): { outcome: RunOutcome; message: string; error: unknown } {
  if (isAbortError(error)) return { outcome: 'cancelled', message: 'The run was cancelled before any trace was handled.', error };
  if (error instanceof AuthError) return { outcome: 'auth', message: error.message, error };
  if (error instanceof NotReadyError) return { outcome: 'notReady', message: error.message, error };
  if (error instanceof ApiError && (error.reason === 'network' || error.reason === 'timeout')) return { outcome: 'unreachable', message: error.message, error };
  return { outcome: 'error', message: error instanceof Error ? error.message : String(error), error };
}
