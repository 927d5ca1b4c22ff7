import type { ApiClient } from '../../api/client';
import type { EvaluationKind } from '../../api/evaluationKinds';
import type { PromptItem } from '../../api/schemas';
import type { Journal } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import type { Shard } from './shards';
import type { Log, RunProgress } from './runState';
import type { SubmitPolicy } from './submissions';
import { RUN_OPTIONS } from '../options/runOptions';
import type { RunOptions } from '../options/runOptions';
import { RUN_SETTINGS } from '../options/runSettings';
import type { TargetCallPolicy } from './targetCalls';
import type { Target } from '../targets/target';
import type { BatchTarget } from '../targets/openai/openaiBatch';
import type { TraceInfo, TraceStore } from '../store/traceStore';
import type { RunSteering } from './runSteering';
import type { RunPrice } from '../cost/prices';

/**
 * What one run of the engine is given (runEvaluation); an option left unset takes the engine's default below. The
 * options a user sets are RunOptions' (src/core/options/runOptions.ts, documented there once); the engine adds
 * what its host supplies (client, journal, store, target, callbacks). SessionRunOptions takes its options from here.
 */
export interface EngineOptions extends Partial<RunOptions> {
  client: ApiClient;
  kind: EvaluationKind;
  evaluationId: number;
  target: Target;
  journal: Journal;
  /** The evaluation's traces, already rebuilt from the journal. */
  store: TraceStore;
  /**
   * This run's record, journaled once there is work to do (a run with nothing to do leaves no trace). With
   * mode "fresh" it sets every journaled answer aside, so every trace goes to the target again.
   */
  runRecord?: Extract<JournalRecord, { t: 'run' }> & { run: string };
  /** Send at most this many traces to the target (the first not yet answered, in list order). */
  limit?: number;
  /** Handle only these traces (Run Trace, Retry Failed, Rerun Traces). */
  only?: ReadonlySet<string>;
  /** Only the traces of this shard of the list (the others are left to the other machines). */
  shard?: Shard;
  /** Rerun Traces: the `only` traces go to the target again, whatever answers the journal holds for them. */
  rerun?: boolean;
  /** Use these prompts instead of listing again (tests). */
  prompts?: readonly PromptItem[];
  /** Use the prompts the journal holds instead of listing again (Run Trace, Rerun Traces). */
  journaledPrompts?: boolean;
  /** Aborts in-flight work at once. */
  signal?: AbortSignal;
  /** Pause, resume and concurrency from outside while the run goes on (run/runSteering.ts). */
  steering?: RunSteering;
  /** Stops taking new traces; in-flight work finishes and is saved. */
  drainSignal?: AbortSignal;
  onProgress?: (progress: RunProgress) => void;
  progressIntervalMs?: number;
  onLog?: Log;
  onTraceChange?: (trace: TraceInfo) => void;
  /** A target Retry-After longer than this stops the run (a quota that will not recover soon). */
  maxTargetRetryAfterMs?: number;
  /** Consecutive quota-worded rate limits that stop the run. */
  maxQuotaStrikes?: number;
  /** Rate-limit retries of one trace before it fails. */
  maxRateLimitRetries?: number;
  /** Answers journaled ahead of the service at most while it is down or refuses the token; then the target waits. */
  aheadOfService?: number;
  /**
   * Asked for a client with a new token when the service rejects the token (the editor: Set Token); the run pauses
   * meanwhile. Absent or undefined: the run stops (the CLI).
   */
  newClient?: (signal: AbortSignal) => Promise<ApiClient | undefined>;
  /** Rounds of a submission that keeps failing for a passing reason (each with the API module's retries). */
  submitRounds?: number;
  /**
   * The traces to answer go through the Batch API (the openai target with batch: true); `target` stays the live
   * target, for --batch-fallback live.
   */
  batch?: BatchTarget;
  /** The run's prices (journaled with its record), for its budget; none: no price known. */
  price?: RunPrice;
  /** Stop before the evaluation's spend could pass this many USD (needs `price`; see src/core/cost/budget.ts). */
  budgetUsd?: number;
  /** run --estimate: told the traces the run would send to the target, then the run ends; nothing is called or submitted. */
  estimateOnly?: (traces: readonly TraceInfo[]) => void;
  /**
   * Asked with the traces the run would send, before any call (the editor's confirmation of a costly run's estimate):
   * false ends the run as cancelled, with nothing called, submitted or recorded.
   */
  confirmCalls?: (traces: readonly TraceInfo[]) => Promise<boolean>;
}

// Answers journaled ahead of a service that is down before the target waits too: the journal holds them, so this
// only bounds how much a run does that nobody can see submitted yet.
const DEFAULT_AHEAD = 256;

// By default, a submission that failed all of the API module's attempts for a passing reason gets this many
// rounds, paused between, before the trace is marked failed.
const SUBMIT_ROUNDS = 3;

/** Traces handled at once. */
export function engineConcurrency(options: EngineOptions): number {
  return Math.max(1, options.concurrency ?? RUN_OPTIONS.concurrency.default);
}

/** How the target is called: the options, with the defaults (RUN_OPTIONS', then the engine's own) where unset. */
export function targetCallPolicy(options: EngineOptions): TargetCallPolicy {
  return {
    retries: options.targetRetries ?? 2,
    userCodeRetries: options.targetRetries ?? 0,
    timeoutMs: options.targetTimeoutMs ?? RUN_OPTIONS.targetTimeoutSeconds.default * 1000,
    maxRetryAfterMs: options.maxTargetRetryAfterMs ?? 300_000,
    maxQuotaStrikes: options.maxQuotaStrikes ?? 3,
    maxRateLimitRetries: options.maxRateLimitRetries ?? 20,
    onError: options.onTargetError ?? RUN_SETTINGS.onTargetError.default,
  };
}

/** How answers are submitted: the options, with the engine's defaults where they are unset. */
export function submitPolicy(options: EngineOptions): SubmitPolicy {
  return { concurrency: engineConcurrency(options), rounds: Math.max(1, options.submitRounds ?? SUBMIT_ROUNDS), ahead: options.aheadOfService ?? DEFAULT_AHEAD };
}
