import { backoffDelay, sleep } from '../../api/retry';
import type { RetryPolicy } from '../../api/retry';
import type { OnTargetError } from '../options/runSettings';
import type { RateInfo } from '../targets/rateHeaders';
import type { RateScheduler } from './rateScheduler';
import type { RunState } from './runState';
import { TargetError } from '../targets/target';
import type { Target, TargetUsage } from '../targets/target';
import type { TraceInfo } from '../store/traceStore';
import type { ErrorRateGuard } from './errorRate';
import { budgetText } from '../cost/budget';
import type { Budget } from '../cost/budget';
import type { HeldPrompts } from '../store/heldPrompts';


export interface TargetCallPolicy {
  /** Further tries of a target call that failed for a passing reason (rate limits aside): a crashed worker, a 503. */
  retries: number;
  /**
   * Further tries of a call the user's own code failed (an exception it raised): by default none, the exception is
   * that prompt's answer; a deterministic bug retried only costs calls and repeats its traceback.
   */
  userCodeRetries?: number;
  timeoutMs: number;
  /** A Retry-After longer than this stops the run (a quota that will not recover soon). */
  maxRetryAfterMs: number;
  /** Consecutive quota-worded rate limits that stop the run. */
  maxQuotaStrikes: number;
  /** Rate-limit retries of one trace before it fails. */
  maxRateLimitRetries: number;
  onError: OnTargetError;
}

/**
 * `ms`: the target's own time on the answer; `queueMs`: the wait for a free worker or slot before it (where the target
 * has one), kept apart so that a pool smaller than the run's concurrency does not pass for a slow model.
 */
export type TargetResult =
  | { answer: string; ms: number; queueMs?: number; errorAnswer: boolean; usage?: TargetUsage; ttftMs?: number; batchSize?: number }
  | { fail: string }
  | 'stopped';

// Pauses between target tries (the target is not the service: its retries are the engine's, not the API module's).
const RATE_LIMIT_BACKOFF: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: Infinity };
const TARGET_FAILURE_BACKOFF: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 250, maxDelayMs: 5_000, maxRetryAfterMs: Infinity };

/**
 * Calling the target for one trace: paced by the rate scheduler, retrying passing failures and rate limits
 * (each after its own Retry-After), stopping the whole run when the quota will not recover. Knows nothing of
 * the journal or the service.
 */
export class TargetCaller {
  private quotaStrikes = 0;
  /** The pace of starts; none for a target that gathers batches (see Target.gathersBatches). */
  private readonly pace: RateScheduler | undefined;

  constructor(
    private readonly target: Target,
    private readonly scheduler: RateScheduler,
    private readonly policy: TargetCallPolicy,
    private readonly run: RunState,
    private readonly evaluation?: { kind: string; evaluationId: number },
    /** Halts the run when the target mostly fails (errorRate.ts); none: --max-error-rate off. */
    private readonly errors?: ErrorRateGuard,
    /** No call starts that could pass it (counting the calls in flight); the run stops with outcome "budget". */
    private readonly budget?: Budget,
    /** The prompts the run just listed, taken here rather than read back from the journal (none held: read). */
    private readonly held?: HeldPrompts,
  ) {
    this.pace = target.gathersBatches ? undefined : scheduler;
  }

  async call(info: TraceInfo, signal: AbortSignal): Promise<TargetResult> {
    const prompt = this.held?.take(info.traceId) ?? info.prompt!;
    let failures = 0;
    let rateLimits = 0;
    for (;;) {
      if (this.run.halted) return 'stopped';
      // Neither a budget nor a pace that lets the call start now is awaited: an await costs a promise and a turn.
      const held = this.budget ? await this.budget.admit(prompt, signal) : undefined;
      if (this.budget && held === undefined) {
        this.run.halt('budget', budgetText(this.budget.state));
        return 'stopped';
      }
      if (held !== undefined && this.run.halted) {
        this.budget!.release(held);
        return 'stopped';
      }
      if (this.pace && !this.pace.startNow(signal)) await this.pace.acquire(signal);
      const t0 = Date.now();
      let rateInfo: RateInfo | undefined;
      const onRateInfo = (i: RateInfo) => (rateInfo = i);
      let usage: TargetUsage | undefined;
      const onUsage = (u: TargetUsage) => (usage = u);
      let ttftMs: number | undefined;
      const onFirstToken = (ms: number) => (ttftMs = ms);
      let queueMs: number | undefined;
      const onQueued = (ms: number) => (queueMs = Math.max(0, ms));
      let batchSize: number | undefined;
      const onBatch = (size: number) => (batchSize = size);
      try {
        this.run.targetCalls++;
        const context = { traceId: info.traceId, ...this.evaluation };
        const answer = await this.target.send(prompt, { signal, timeoutMs: this.policy.timeoutMs, onRateInfo, onUsage, onFirstToken, onQueued, onBatch, context });
        if (held !== undefined) this.budget!.settle(held, prompt, usage ?? undefined);
        const total = Date.now() - t0;
        this.pace?.release(true, total, rateInfo);
        this.quotaStrikes = 0;
        this.counted(undefined);
        // Set field by field, not spread from objects made for it: one object per answer (issue 36).
        const result: TargetResult = { answer, ms: Math.max(0, total - (queueMs ?? 0)), errorAnswer: false };
        if (queueMs !== undefined) result.queueMs = queueMs;
        if (usage) result.usage = usage;
        if (ttftMs !== undefined) result.ttftMs = ttftMs;
        if (batchSize !== undefined) result.batchSize = batchSize;
        return result;
      } catch (error) {
        const limited = error instanceof TargetError && error.kind === 'rateLimited';
        // A refused (rate-limited) call costs nothing; any other failure may have, and spends its estimate.
        if (held !== undefined) this.budget!.settle(held, prompt, limited ? { promptTokens: 0, completionTokens: 0 } : undefined);
        this.pace?.release(!limited, Date.now() - t0, rateInfo);
        if (signal.aborted) throw error;
        const te = error instanceof TargetError ? error : new TargetError(`The target failed: ${(error as Error).message}`, 'failed');
        this.run.lastError = te.message;
        if (te.kind === 'rateLimited') {
          this.run.rateLimited++;
          this.run.noteRateLimit();
          if (this.quotaExhausted(te)) return 'stopped';
          if (++rateLimits > this.policy.maxRateLimitRetries) return this.giveUp(info, te);
          if (this.scheduler.rateLimited(rateInfo)) {
            this.run.log('warn', `The target is rate-limiting; pacing at ${this.scheduler.perSecond.toFixed(1)} requests/s.`);
          }
          // This request waits its own Retry-After; the others keep the (lowered) pace.
          await sleep(te.details.retryAfterMs ?? backoffDelay(rateLimits, RATE_LIMIT_BACKOFF), signal);
          continue;
        }
        if (te.details.stopsRun) {
          this.run.halt('error', `${te.message} The run stopped; answers so far are saved.`, te);
          return 'stopped';
        }
        const retries = te.details.userCode ? (this.policy.userCodeRetries ?? 0) : this.policy.retries;
        if (!te.retryable || ++failures > retries) return this.giveUp(info, te);
        await sleep(backoffDelay(failures, TARGET_FAILURE_BACKOFF), signal);
      }
    }
  }

  /** True (and the run halted) when the quota or rate limit will not recover soon. */
  private quotaExhausted(te: TargetError): boolean {
    this.quotaStrikes = te.details.quota ? this.quotaStrikes + 1 : 0;
    if (this.quotaStrikes < this.policy.maxQuotaStrikes && (te.details.retryAfterMs ?? 0) <= this.policy.maxRetryAfterMs) return false;
    this.run.halt(
      'quota',
      `The target's quota or rate limit will not recover soon (${te.message}). The run stopped; answers so far are saved. Raise the quota or wait, then run again to resume.`,
      te,
    );
    return true;
  }

  /** One call's end counted against --max-error-rate: past it, the run stops taking traces (in-flight ones finish). */
  private counted(failure: string | undefined): void {
    const stop = this.errors?.record(failure);
    if (stop && !this.run.stopping) this.run.halt('error', stop);
  }

  private giveUp(info: TraceInfo, error: TargetError): TargetResult {
    this.counted(error.message);
    // Fixed words, never the endpoint's text: an error body can quote a key, and this answer goes to the service.
    // The log keeps the (redacted) reason, so a user can see why.
    if (this.policy.onError === 'submit') {
      this.run.logFailure(`Trace "${info.traceId}" failed at the target (${error.message}); submitting "${error.submittable}" as its answer.`);
      return { answer: error.submittable, ms: 0, errorAnswer: true };
    }
    return { fail: error.message };
  }
}
