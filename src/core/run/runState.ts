import { StorageError } from '../journal/storage';
import type { HoldState } from './serviceHold';
import type { Cost } from '../cost/runCost';
import type { TraceStore } from '../store/traceStore';

export type RunOutcome = 'completed' | 'failedTraces' | 'cancelled' | 'auth' | 'unreachable' | 'notReady' | 'quota' | 'storage' | 'error' | 'budget';

export interface StopReason {
  outcome: RunOutcome;
  message: string;
  error?: unknown;
}

export interface RunProgress {
  phase: 'listing' | 'waiting' | 'running' | 'done';
  total: number;
  counts: ReturnType<TraceStore['snapshotCounts']>;
  /** Traces finished (submitted or failed) per second in this run. */
  ratePerSecond: number;
  /** The ETA's measure: what this run set out to do (--limit, --only, a resume) and has finished of it. */
  etaSeconds: number | undefined;
  thisRun?: { planned: number; finished: number };
  elapsedMs: number;
  targetConcurrency: number;
  lastError: string | undefined;
  waitingReason?: string;
  /** Submissions held: the service is down (an outage) or refused the token; answers wait in the journal. */
  hold?: HoldState & { waiting: number };
  /**
   * The run's target is a chat model of the editor and no window is attached to serve it: its calls wait for one
   * (set by the runner process that hosts the run).
   */
  waitingFor?: 'window';
  /** The pace (requests/s) when the target's rate limit holds the run back. */
  targetRateLimit?: number;
  /** The same for submissions held back by the service's rate limit. */
  serviceRateLimit?: number;
  /** Paused from outside (eval-runner pause, the editor's Pause): calls in flight finish, none starts. */
  paused?: boolean;
  /** The Batch API's batches this run follows (the openai target with batch: true). */
  batch?: BatchProgress;
  /** What the run has cost so far (src/core/cost/runCost.ts); absent before the run is recorded. */
  cost?: Cost;
}

/** What a run following Batch API batches shows: the least advanced batch's state, the requests done of all. */
export interface BatchProgress {
  state: 'uploading' | 'validating' | 'in_progress' | 'finalizing' | 'cancelling' | 'completed' | 'failed' | 'expired' | 'cancelled';
  batches: number;
  completed: number;
  total: number;
  /** Tokens answered through batches in this run, and half their live price where the model's price is known. */
  promptTokens: number;
  completionTokens: number;
  savedUsd?: number;
}

/** `final`: the reason the run stopped, which its summary says again (a terminal need not print it twice). */
export type Log = (level: 'info' | 'warn' | 'error', message: string, final?: boolean) => void;

// Each failed trace's reason goes to the log up to this many per run; past it the log would drown, and the
// traces keep their reasons (Run Details, status, exports).
const LOGGED_FAILURES = 20;

/**
 * What the parts of a run share: its counters and its one stop reason. A run stops for exactly one reason,
 * the first that happens: a part halts it (token rejected, quota, service unreachable), an unexpected
 * failure, or the user cancels (drain: finish what is in flight; abort: stop at once).
 */
export class RunState {
  readonly started = Date.now();
  runningSince = 0;
  phase: RunProgress['phase'] = 'listing';
  /** Why the run waits for the adversarial prompts, and when it looks again (progress counts down to it). */
  waiting: { reason: string; nextCheckAt: number } | undefined;
  lastError: string | undefined;
  /** Traces this run set out to handle, and those finished (submitted, failed or held for review). */
  queued = 0;
  finishedNow = 0;
  submittedNow = 0;
  targetCalls = 0;
  /** Target calls answered with a rate limit. */
  rateLimited = 0;
  /** When the target or the service answered with a rate limit (ms since the epoch), for the run's timeline. */
  readonly rateLimitTimes: number[] = [];
  private reason: StopReason | undefined;
  private failuresLogged = 0;
  private readonly stopListeners = new Set<() => void>();

  constructor(
    readonly log: Log,
    readonly hardSignal: AbortSignal,
    private readonly drainSignal: AbortSignal | undefined,
  ) {
    const stopped = () => this.tellStopping();
    hardSignal.addEventListener('abort', stopped, { once: true });
    drainSignal?.addEventListener('abort', stopped, { once: true });
  }

  /** Told once the run takes no new work (a halt, a cancel): for parts that wait on something else. Returns the way to stop. */
  onStopping(listener: () => void): () => void {
    this.stopListeners.add(listener);
    return () => this.stopListeners.delete(listener);
  }

  private tellStopping(): void {
    for (const listener of this.stopListeners) listener();
  }

  /** A rate limit answered now (the first 5,000 of a run are kept: the timeline needs no more). */
  noteRateLimit(): void {
    if (this.rateLimitTimes.length < 5000) this.rateLimitTimes.push(Date.now());
  }

  /** Stops the run for this reason, unless it is already stopping for another. */
  halt(outcome: RunOutcome, message: string, error?: unknown): void {
    if (this.reason) return;
    this.reason = { outcome, message, ...(error !== undefined ? { error } : {}) };
    if (outcome !== 'cancelled') this.log('error', message, true);
    this.tellStopping();
  }

  /** A part failed in a way nothing planned for: that is the reason reported, whatever else stopped the run. */
  fail(error: unknown): void {
    // The journal cannot be written: that is the reason, in its own words (and never "unexpectedly").
    if (error instanceof StorageError) {
      if (this.reason?.outcome === 'storage') return;
      this.reason = undefined;
      this.halt('storage', error.message, error);
      return;
    }
    if (this.reason?.outcome === 'error' || this.reason?.outcome === 'storage') return;
    const message = `The run failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`;
    this.reason = undefined;
    this.halt('error', message, error);
  }

  /** True once a part halted the run; new traces are not taken, in-flight ones see it. */
  get halted(): boolean {
    return this.reason !== undefined;
  }

  /** True once the run takes no new traces, for whatever reason. */
  get stopping(): boolean {
    return this.reason !== undefined || this.hardSignal.aborted || this.drainSignal?.aborted === true;
  }

  /** The reason the run ended: the one a part gave, or the user's cancel; undefined when it simply finished. */
  get stopReason(): StopReason | undefined {
    if (this.reason) return this.reason;
    if (this.hardSignal.aborted || this.drainSignal?.aborted) {
      return { outcome: 'cancelled', message: 'The run was cancelled; every answer received so far is saved and the next run resumes from there.' };
    }
    return undefined;
  }

  logFailure(message: string): void {
    if (++this.failuresLogged <= LOGGED_FAILURES) this.log('warn', message);
    else if (this.failuresLogged === LOGGED_FAILURES + 1) this.log('warn', 'More traces failed; their reasons are kept with each trace, not logged one by one.');
  }

  progress(
    store: TraceStore,
    pacing: { concurrency: number; target?: number | undefined; service?: number | undefined; hold?: RunProgress['hold'] | undefined; batch?: BatchProgress | undefined },
  ): RunProgress {
    const elapsedMs = Date.now() - this.started;
    // The rate counts from the first trace, not from the wait for generation.
    const runningMs = this.runningSince ? Date.now() - this.runningSince : 0;
    const ratePerSecond = runningMs > 0 ? (this.finishedNow * 1000) / runningMs : 0;
    const remaining = Math.max(0, this.queued - this.finishedNow);
    return {
      phase: this.phase,
      total: store.total,
      counts: store.snapshotCounts(),
      ratePerSecond,
      etaSeconds: ratePerSecond > 0 ? remaining / ratePerSecond : undefined,
      thisRun: { planned: this.queued, finished: this.finishedNow },
      elapsedMs,
      targetConcurrency: pacing.concurrency,
      lastError: this.lastError,
      ...(this.waiting ? { waitingReason: waitingText(this.waiting) } : {}),
      ...(pacing.target !== undefined ? { targetRateLimit: pacing.target } : {}),
      ...(pacing.service !== undefined ? { serviceRateLimit: pacing.service } : {}),
      ...(pacing.hold ? { hold: pacing.hold } : {}),
      ...(pacing.batch ? { batch: pacing.batch } : {}),
    };
  }
}

/** "generation is not finished; next check in 12 s", the seconds counted from now. */
export function waitingText(waiting: { reason: string; nextCheckAt: number }, now = Date.now()): string {
  return `${waiting.reason}; next check in ${Math.max(0, Math.ceil((waiting.nextCheckAt - now) / 1000))} s`;
}
