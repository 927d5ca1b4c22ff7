import type { ApiClient } from '../../api/client';
import { ApiError, AuthError, isAbortError } from '../../api/errors';
import type { EvaluationKind } from '../../api/evaluationKinds';
import { backoffDelay, sleep } from '../../api/retry';
import type { RetryPolicy } from '../../api/retry';
import type { Journal } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import { commit } from '../store/commit';
import { Gate } from './gate';
import { isOutage } from './serviceHold';
import type { ServiceHold } from './serviceHold';
import type { RateScheduler } from './rateScheduler';
import type { RunState } from './runState';
import type { TraceInfo, TraceStore } from '../store/traceStore';

export interface SubmitPolicy {
  /** Submissions in flight at most (and the in-flight window that bounds what a crash can repeat). */
  concurrency: number;
  /** Rounds of a submission that keeps failing for a passing reason (each with the API module's retries). */
  rounds: number;
  /** Answers journaled ahead of the service at most (the target waits beyond it, as in an outage). */
  ahead: number;
}

// Between rounds of a submission that failed all of the API module's attempts for a passing reason; after
// the last round the trace is marked failed (its answer stays journaled for the next run either way).
const SUBMIT_ROUND_BACKOFF: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 1_000, maxDelayMs: 8_000, maxRetryAfterMs: Infinity };
/**
 * An answer handed to the submitter: `durable`, its journal write, which the submission waits for; `text`, the answer
 * itself when the handler has it in hand (a target's), so the submission does not read it back through the store and
 * the journal (a journaled answer from an earlier run is read there).
 */
export interface HandedAnswer {
  durable: Promise<void> | undefined;
  text?: string;
}

const TRANSIENT_SUBMIT_FAILURES: ReadonlySet<ApiError['reason']> = new Set(['server', 'rateLimited', 'network', 'timeout']);

/**
 * Submitting answers, beside the target calls: a trace hands its answer over and its slot takes the next
 * prompt, so the fsync that must precede each submission never idles a target slot or a connection. At most
 * `concurrency` submissions are in flight; a full hand-over queue holds the target slots back.
 */
export class Submitter {
  private readonly tasks = new Set<Promise<void>>();
  // Answers waiting for their fsync or a free connection; a few rounds of the window hide the fsync.
  private readonly handOverGate: Gate;
  private readonly sendGate: Gate;

  constructor(
    private client: ApiClient,
    private readonly evaluation: { kind: EvaluationKind; evaluationId: number },
    private readonly journal: Journal,
    private readonly store: TraceStore,
    private readonly run: RunState,
    private readonly policy: SubmitPolicy,
    private readonly changed: (info: TraceInfo) => void,
    /** Paces submissions once the service has answered 429 (until then only `concurrency` bounds them). */
    private readonly pace: RateScheduler,
    /** Holds submissions while the service is down or the token is refused. */
    private readonly hold: ServiceHold,
  ) {
    this.handOverGate = new Gate(Math.max(policy.concurrency * 4, policy.ahead));
    this.sendGate = new Gate(policy.concurrency);
  }

  /**
   * Takes a trace's answer; resolves once it has a place in the queue (not when it is submitted). `done` runs when the
   * trace leaves the queue.
   */
  async handOver(info: TraceInfo, answer: HandedAnswer, signal: AbortSignal, done: () => void): Promise<void> {
    const place = this.handOverGate.enter();
    if (place) await place;
    const task = (async () => {
      try {
        if (answer.durable) await answer.durable;
        const turn = this.sendGate.enter();
        if (turn) await turn;
        try {
          if (!this.run.halted && !signal.aborted) await this.submit(info, answer.text, signal);
        } finally {
          this.sendGate.leave();
        }
      } catch (error) {
        this.run.fail(error);
      } finally {
        done();
        this.handOverGate.leave();
      }
    })();
    this.tasks.add(task);
    void task.then(() => this.tasks.delete(task));
  }

  /** Answers handed over and not yet submitted (waiting for the service, or on their way). */
  get waiting(): number {
    return this.tasks.size;
  }

  /** Submits with this client from now on (a new token). */
  useClient(client: ApiClient): void {
    this.client = client;
  }

  /** Resolves when every answer handed over is submitted or has seen the run stop. */
  async settled(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all(this.tasks);
  }

  private async submit(info: TraceInfo, text: string | undefined, signal: AbortSignal): Promise<void> {
    let round = 1;
    for (let probe = false; ; ) {
      if (this.hold.active) {
        const turn = await this.hold.wait(signal);
        if (turn === 'stop') return;
        probe = turn === 'probe';
      }
      const outcome = await this.submitOnce(info, text, signal, round < this.policy.rounds);
      if (outcome === 'held') continue;
      // A probe that ended otherwise (cancelled) hands the probing on.
      if (probe) this.hold.probeEnded();
      if (outcome === 'done' || this.run.stopping) return;
      // The API module already retried this request; a later round outlasts a longer bad patch of the service.
      await sleep(backoffDelay(round++, SUBMIT_ROUND_BACKOFF), signal).catch(() => undefined);
      if (signal.aborted) return;
    }
  }

  /**
   * One submission with the API module's retries: 'again' when it failed for a passing reason and may go again,
   * 'held' when the service is down or refused the token (it waits for the hold), 'done' otherwise.
   */
  private async submitOnce(info: TraceInfo, text: string | undefined, signal: AbortSignal, mayRetry: boolean): Promise<'done' | 'again' | 'held'> {
    // The service is paced only once it has asked for it; until then a start is only counted (cheap, no wait).
    const paced = this.pace.isLimited;
    if (paced) {
      try {
        await this.pace.acquire(signal);
      } catch {
        return 'done';
      }
    } else this.pace.noteStart();
    const t0 = Date.now();
    let admitted = true;
    try {
      await this.accepted(info, text, signal);
      return 'done';
    } catch (error) {
      admitted = !(error instanceof ApiError && error.reason === 'rateLimited');
      return await this.rejected(info, signal, mayRetry, error);
    } finally {
      if (paced) this.pace.release(admitted, Date.now() - t0);
    }
  }

  private async accepted(info: TraceInfo, text: string | undefined, signal: AbortSignal): Promise<void> {
    const { kind, evaluationId } = this.evaluation;
    let record: Extract<JournalRecord, { t: 'submitted' }>;
    try {
      const result = await this.client.submitAnswer(kind, evaluationId, info.traceId, text ?? info.answer!, { signal });
      record = { t: 'submitted', id: info.traceId, at: Date.now(), ...(result.requestCode ? { code: result.requestCode } : {}) };
    } catch (error) {
      // 409 Conflict: the service already holds an answer for this trace (a reply lost after it recorded one,
      // or another run's): submitted, "already at the service", and never sent again.
      if (!(error instanceof ApiError && error.status === CONFLICT)) throw error;
      record = { t: 'submitted', id: info.traceId, at: Date.now(), dup: true, ...(error.requestCode ? { code: error.requestCode } : {}) };
    }
    this.hold.up();
    this.run.submittedNow++;
    this.run.finishedNow++;
    // The acceptance need not hold the trace's slot until it is on disk: losing it to a crash costs one
    // repeated submission, never an answer. The backlog stays within the in-flight window.
    const durable = commit(this.journal, this.store, record);
    this.changed(info);
    if (this.journal.backlog > this.policy.concurrency) await durable;
    else durable.catch(() => undefined);
  }

  /** A submission that failed: hold for the service or a token, retry later, or mark the trace failed. */
  private async rejected(info: TraceInfo, signal: AbortSignal, mayRetry: boolean, error: unknown): Promise<'done' | 'again' | 'held'> {
    if (isAbortError(error) || signal.aborted) return 'done';
    if (error instanceof AuthError) {
      if (await this.hold.tokenRejected(error, signal)) return 'held';
      this.run.halt('auth', error.message, error);
      return 'done';
    }
    // A service that is down is waited for (within the patience): never a reason to fail a trace.
    if (isOutage(error)) {
      this.run.lastError = error.message;
      this.hold.down(error);
      return this.run.halted ? 'done' : 'held';
    }
    this.hold.up();
    const reason = error instanceof Error ? error.message : String(error);
    this.run.lastError = reason;
    // The service's own rate limit slows the submitters, as the target's slows the target calls.
    if (error instanceof ApiError && error.reason === 'rateLimited') {
      this.pace.rateLimited();
      this.run.noteRateLimit();
    }
    // A Retry-After beyond the API module's cap is the service asking for a long pause: not retried in this run.
    const transient =
      error instanceof ApiError && TRANSIENT_SUBMIT_FAILURES.has(error.reason) && (error.retryAfterMs ?? 0) <= SUBMIT_ROUND_BACKOFF.maxDelayMs;
    if (transient && mayRetry && !this.run.halted) {
      this.run.log('warn', `Submission of trace "${info.traceId}" failed (${reason}); trying again shortly.`);
      return 'again';
    }
    const record = { t: 'failed' as const, id: info.traceId, reason, stage: 'submit' as const, at: Date.now() };
    this.run.logFailure(`Submission of trace "${info.traceId}" failed: ${reason}`);
    const durable = commit(this.journal, this.store, record);
    this.run.finishedNow++;
    this.changed(info);
    await durable;
    return 'done';
  }
}

const CONFLICT = 409;


