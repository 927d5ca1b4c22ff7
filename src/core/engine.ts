import type { ApiClient } from '../api/client';
import { ApiError, AuthError, NotReadyError, isAbortError } from '../api/errors';
import type { EvaluationKind } from '../api/kinds';
import { backoffDelay, sleep } from '../api/retry';
import type { RetryPolicy } from '../api/retry';
import type { PromptItem } from '../api/schemas';
import type { Journal, JournalRecord } from './journal';
import { planQueue } from './runPlan';
import type { RunPlan } from './runPlan';
import { AdaptiveLimiter, Gate } from './limiter';
import { TargetError } from './targets/target';
import type { Target } from './targets/target';
import type { StateCounts, TraceInfo, TraceStore } from './traceStore';

export type OnTargetError = 'fail' | 'submit';

export interface EngineOptions {
  client: ApiClient;
  kind: EvaluationKind;
  evaluationId: number;
  target: Target;
  journal: Journal;
  /** The evaluation's traces, already rebuilt from the journal. */
  store: TraceStore;
  /** Traces handled at once (target calls and submissions overlap within it). */
  concurrency?: number;
  /** Robustness: how long to wait for generation before giving up; 0 tries once. */
  waitForGenerationMs?: number;
  onTargetError?: OnTargetError;
  targetTimeoutMs?: number;
  /** Further tries of a failing target call (rate limits aside). */
  targetRetries?: number;
  /** Journal answers, submit nothing: they wait as Responded (--no-submit, review before submitting). */
  holdAnswers?: boolean;
  /**
   * This run's record, journaled once there is work to do (a run with nothing to do leaves no trace). With
   * mode "fresh" it sets every journaled answer aside, so every trace goes to the target again.
   */
  runRecord?: Extract<JournalRecord, { t: 'run' }> & { run: string };
  /** Send at most this many traces to the target (the first not yet answered, in list order). */
  limit?: number;
  /** Handle only these traces (Run Trace, Retry Failed). */
  only?: ReadonlySet<string>;
  /** Use these prompts instead of listing again. */
  prompts?: readonly PromptItem[];
  /** Aborts in-flight work at once. */
  signal?: AbortSignal;
  /** Stops taking new traces; in-flight work finishes and is saved. */
  drainSignal?: AbortSignal;
  onProgress?: (progress: RunProgress) => void;
  progressIntervalMs?: number;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
  onTraceChange?: (trace: TraceInfo) => void;
  /** A target Retry-After longer than this stops the run (a quota that will not recover soon). */
  maxTargetRetryAfterMs?: number;
  /** Consecutive quota-worded rate limits that stop the run. */
  maxQuotaStrikes?: number;
  /** Rate-limit retries of one trace before it fails. */
  maxRateLimitRetries?: number;
  /** Consecutive submissions that cannot reach the service before the run stops. */
  maxUnreachable?: number;
  /** Rounds of a submission that keeps failing for a passing reason (each with the API module's retries). */
  submitRounds?: number;
}

export interface RunProgress {
  phase: 'listing' | 'waiting' | 'running' | 'done';
  total: number;
  counts: StateCounts;
  /** Traces finished (submitted or failed) per second in this run. */
  ratePerSecond: number;
  etaSeconds: number | undefined;
  elapsedMs: number;
  targetConcurrency: number;
  lastError: string | undefined;
  waitingReason?: string;
}

export type RunOutcome = 'completed' | 'failedTraces' | 'cancelled' | 'auth' | 'unreachable' | 'notReady' | 'quota' | 'error';

export interface RunSummary {
  outcome: RunOutcome;
  /** One sentence for the user when the outcome is not plain success. */
  message: string | undefined;
  total: number;
  counts: StateCounts;
  submittedNow: number;
  targetCalls: number;
  failed: Array<{ traceId: string; reason: string }>;
  durationMs: number;
  /** Time spent handling traces (after the prompts came). */
  runningMs: number;
  error: unknown;
  /** The run's id when it had work to do and was recorded. */
  runId: string | undefined;
  /** What the run set out to do: traces sent to the target, those --limit left for later, answers resubmitted. */
  planned: { callTarget: number; wanted: number; submitFirst: number };
}

// Pauses between target tries (the target is not the service: its retries are the engine's, not the API module's).
const RATE_LIMIT_BACKOFF: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: Infinity };
const TARGET_FAILURE_BACKOFF: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 250, maxDelayMs: 5_000, maxRetryAfterMs: Infinity };

// By default, a submission that failed all of the API module's attempts for a passing reason gets this many rounds,
// paused between, before the trace is marked failed (its answer stays journaled for the next run either way).
const SUBMIT_ROUNDS = 3;
const SUBMIT_ROUND_BACKOFF: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 1_000, maxDelayMs: 8_000, maxRetryAfterMs: Infinity };
const TRANSIENT_SUBMIT_FAILURES: ReadonlySet<ApiError['reason']> = new Set(['server', 'rateLimited', 'network', 'timeout']);
// Each failed trace's reason goes to the log up to this many per run; past it the log would drown, and the
// traces keep their reasons (Process Details, status, exports).
const LOGGED_FAILURES = 20;

type TargetResult = { answer: string; ms: number; errorAnswer: boolean } | { fail: string } | 'stopped';

export async function runEvaluation(options: EngineOptions): Promise<RunSummary> {
  const { client, kind, evaluationId, target, journal, store } = options;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const targetRetries = options.targetRetries ?? 2;
  const targetTimeoutMs = options.targetTimeoutMs ?? 600_000;
  const maxTargetRetryAfterMs = options.maxTargetRetryAfterMs ?? 300_000;
  const maxQuotaStrikes = options.maxQuotaStrikes ?? 3;
  const maxRateLimitRetries = options.maxRateLimitRetries ?? 20;
  const maxUnreachable = options.maxUnreachable ?? 3;
  const submitRounds = Math.max(1, options.submitRounds ?? SUBMIT_ROUNDS);
  const hardSignal = options.signal ?? new AbortController().signal;
  const log = options.onLog ?? (() => undefined);
  const started = Date.now();
  const limiter = new AdaptiveLimiter(concurrency);

  let phase: RunProgress['phase'] = 'listing';
  let waitingReason: string | undefined;
  let lastError: string | undefined;
  let failuresLogged = 0;
  const logFailure = (message: string) => {
    if (++failuresLogged <= LOGGED_FAILURES) log('warn', message);
    else if (failuresLogged === LOGGED_FAILURES + 1) log('warn', `More traces failed; their reasons are kept with each trace, not logged one by one.`);
  };
  let finishedNow = 0;
  let submittedNow = 0;
  let targetCalls = 0;
  let quotaStrikes = 0;
  let unreachableStreak = 0;
  let stop: { outcome: RunOutcome; message: string; error?: unknown } | undefined;
  let queued = 0;

  let runningSince = 0;
  const progress = (): RunProgress => {
    const elapsedMs = Date.now() - started;
    // The rate counts from the first trace, not from the wait for generation.
    const runningMs = runningSince ? Date.now() - runningSince : 0;
    const ratePerSecond = runningMs > 0 ? (finishedNow * 1000) / runningMs : 0;
    const remaining = Math.max(0, queued - finishedNow);
    return {
      phase,
      total: store.total,
      counts: store.snapshotCounts(),
      ratePerSecond,
      etaSeconds: ratePerSecond > 0 ? remaining / ratePerSecond : undefined,
      elapsedMs,
      targetConcurrency: limiter.limit,
      lastError,
      ...(waitingReason ? { waitingReason } : {}),
    };
  };
  // Progress is sampled on a timer, never per trace: 100,000 traces do not mean 100,000 events.
  const ticker = options.onProgress ? setInterval(() => options.onProgress!(progress()), options.progressIntervalMs ?? 250) : undefined;
  const changed = (info: TraceInfo) => options.onTraceChange?.(info);

  let detach = () => undefined as void;
  const finish = async (outcome: RunOutcome, message: string | undefined, error?: unknown): Promise<RunSummary> => {
    if (ticker) clearInterval(ticker);
    detach();
    await journal.flush();
    phase = 'done';
    options.onProgress?.(progress());
    if (recorded) await journal.append({ t: 'end', run: recorded, at: Date.now(), outcome });
    const failed = [...store.traces.values()]
      .filter((t) => t.state === 'failed' && (!options.only || options.only.has(t.traceId)))
      .map((t) => ({ traceId: t.traceId, reason: t.error ?? 'unknown reason' }));
    return {
      outcome,
      message,
      total: store.total,
      counts: store.snapshotCounts(),
      submittedNow,
      targetCalls,
      failed,
      durationMs: Date.now() - started,
      runningMs: runningSince ? Date.now() - runningSince : 0,
      error,
      runId: recorded,
      planned: { callTarget: plan?.callTarget.length ?? 0, wanted: plan?.wanted ?? 0, submitFirst: plan?.submitFirst.length ?? 0 },
    };
  };
  let recorded: string | undefined;
  let plan: RunPlan | undefined;

  // 1. The prompts.
  let prompts: readonly PromptItem[];
  try {
    if (options.prompts) prompts = options.prompts;
    else if (kind === 'robustness') {
      phase = 'waiting';
      prompts = await client.waitForPrompts(kind, evaluationId, {
        timeoutMs: options.waitForGenerationMs ?? 0,
        signal: hardSignal,
        onWait: (e) => {
          waitingReason = `${e.reason}; next check in ${Math.ceil(e.delayMs / 1000)} s`;
          log('info', `Waiting for the adversarial prompts of evaluation ${evaluationId}: ${waitingReason}.`);
        },
      });
      waitingReason = undefined;
    } else prompts = await client.listPrompts(kind, evaluationId, { signal: hardSignal });
  } catch (error) {
    const [outcome, message] = classifyFatal(error);
    return finish(outcome, message, error);
  }
  phase = 'running';
  runningSince = Date.now();
  const listChanged = differsFromStore(store, prompts);
  const duplicates = store.setListed(prompts);
  if (duplicates.length) {
    log('warn', `The service listed ${duplicates.length} trace id(s) more than once (first: "${duplicates[0]}"); each is handled once.`);
  }
  // The journal owns the prompts: the list goes in when it is new or changed, so the editor shows it without a side file.
  if (listChanged) await journal.append({ t: 'prompts', at: Date.now(), items: [...prompts] });

  // 2. What is left to do: journaled answers are submitted first and never sent to the target again.
  const fresh = options.runRecord?.mode === 'fresh';
  const planOptions = { only: options.only, holdAnswers: options.holdAnswers, limit: options.limit };
  plan = planQueue(store, { ...planOptions, ignoreAnswers: fresh });
  if (options.runRecord && plan.submitFirst.length + plan.callTarget.length > 0) {
    await journal.append(options.runRecord);
    store.apply(options.runRecord);
    recorded = options.runRecord.run;
    // A fresh run's record has set the old answers aside: plan again over what is left.
    if (fresh) plan = planQueue(store, planOptions);
  }
  const { submitFirst, callTarget } = plan;
  const queue = [...submitFirst, ...callTarget];
  queued = queue.length;
  if (submitFirst.length) log('info', `Resuming: ${submitFirst.length} journaled answer(s) to submit without calling the target again.`);
  let next = 0;

  // One listener on the long-lived run signal fans out to a controller per trace in flight, so
  // requests and sleeps only ever listen on short-lived signals.
  const inflight = new Set<AbortController>();
  const onHardAbort = () => {
    for (const c of inflight) c.abort(hardSignal.reason);
  };
  hardSignal.addEventListener('abort', onHardAbort, { once: true });
  detach = () => hardSignal.removeEventListener('abort', onHardAbort);

  const stopping = () => stop !== undefined || fatal !== undefined || hardSignal.aborted || options.drainSignal?.aborted === true;
  const halt = (outcome: RunOutcome, message: string, error?: unknown) => {
    if (!stop) {
      stop = { outcome, message, error };
      log('error', message);
    }
  };

  async function runTarget(info: TraceInfo, signal: AbortSignal): Promise<TargetResult> {
    let failures = 0;
    let rateLimits = 0;
    for (;;) {
      if (stop) return 'stopped';
      await limiter.acquire(signal);
      const t0 = Date.now();
      try {
        targetCalls++;
        const answer = await target.send(info.prompt!, { signal, timeoutMs: targetTimeoutMs });
        limiter.release('success');
        quotaStrikes = 0;
        return { answer, ms: Date.now() - t0, errorAnswer: false };
      } catch (error) {
        limiter.release('failure');
        if (signal.aborted) throw error;
        const te = error instanceof TargetError ? error : new TargetError(`The target failed: ${(error as Error).message}`, 'failed');
        lastError = te.message;
        if (te.kind === 'rateLimited') {
          limiter.rateLimited(te.details.retryAfterMs);
          quotaStrikes = te.details.quota ? quotaStrikes + 1 : 0;
          const retryAfter = te.details.retryAfterMs ?? 0;
          if (quotaStrikes >= maxQuotaStrikes || retryAfter > maxTargetRetryAfterMs) {
            halt(
              'quota',
              `The target's quota or rate limit will not recover soon (${te.message}). The run stopped; answers so far are saved. Raise the quota or wait, then run again to resume.`,
              te,
            );
            return 'stopped';
          }
          if (++rateLimits > maxRateLimitRetries) return giveUp(info, te);
          log('warn', `Target rate limit on trace "${info.traceId}"; concurrency now ${limiter.limit}.`);
          if (te.details.retryAfterMs === undefined) await sleep(backoffDelay(rateLimits, RATE_LIMIT_BACKOFF), signal);
          continue;
        }
        if (!te.retryable || ++failures > targetRetries) return giveUp(info, te);
        await sleep(backoffDelay(failures, TARGET_FAILURE_BACKOFF), signal);
      }
    }
  }

  function giveUp(info: TraceInfo, error: TargetError): TargetResult {
    // Fixed words, never the endpoint's text: an error body can quote a key, and this answer goes to the service.
    // The log keeps the (redacted) reason, so a user can see why.
    if (options.onTargetError === 'submit') {
      logFailure(`Trace "${info.traceId}" failed at the target (${error.message}); submitting "${error.submittable}" as its answer.`);
      return { answer: error.submittable, ms: 0, errorAnswer: true };
    }
    return { fail: error.message };
  }

  // Submissions run beside the target calls: a trace hands its answer over and its slot takes the next prompt,
  // so the fsync that must precede each submission never idles a target slot or a connection. At most
  // `concurrency` submissions are in flight; a full hand-over queue holds the target slots back.
  const submissions = new Set<Promise<void>>();
  // Answers waiting for their fsync or a free connection; a few rounds of the window hide the fsync.
  const handOverGate = new Gate(concurrency * 4);
  const sendGate = new Gate(concurrency);
  let fatal: unknown;

  async function handOver(info: TraceInfo, durable: Promise<void> | undefined, controller: AbortController): Promise<void> {
    await handOverGate.enter();
    const task = (async () => {
      try {
        if (durable) await durable;
        await sendGate.enter();
        try {
          if (!stop && !controller.signal.aborted) await submit(info, controller.signal);
        } finally {
          sendGate.leave();
        }
      } catch (error) {
        fatal ??= error;
      } finally {
        inflight.delete(controller);
        handOverGate.leave();
      }
    })();
    submissions.add(task);
    void task.then(() => submissions.delete(task));
  }

  async function handle(info: TraceInfo): Promise<void> {
    const controller = new AbortController();
    if (hardSignal.aborted) controller.abort(hardSignal.reason);
    inflight.add(controller);
    let handedOver = false;
    try {
      const answer = await handleTarget(info, controller.signal);
      if (answer === 'done' || stop || controller.signal.aborted) return;
      handedOver = true;
      await handOver(info, answer.durable, controller);
    } finally {
      if (!handedOver) inflight.delete(controller);
    }
  }

  /** Gets the trace an answer (unless the journal has one); 'done' when there is nothing to submit now. */
  async function handleTarget(info: TraceInfo, signal: AbortSignal): Promise<'done' | { durable: Promise<void> | undefined }> {
    if (info.answer !== undefined && (info.state === 'answered' || info.failedStage === 'submit')) return { durable: undefined };
    store.setTransient(info.traceId, 'running');
    changed(info);
    let result: TargetResult;
    try {
      result = await runTarget(info, signal);
    } catch (error) {
      if (!isAbortError(error) && !signal.aborted) throw error;
      result = 'stopped';
    }
    if (result === 'stopped') {
      store.setTransient(info.traceId, 'pending');
      changed(info);
      return 'done';
    }
    if ('fail' in result) {
      const record = { t: 'failed' as const, id: info.traceId, p: info.prompt, reason: result.fail, stage: 'target' as const, at: Date.now() };
      logFailure(`Trace "${info.traceId}" failed at the target: ${result.fail}`);
      await journal.append(record);
      store.apply(record);
      finishedNow++;
      changed(info);
      return 'done';
    }
    const record = {
      t: 'answer' as const,
      id: info.traceId,
      p: info.prompt!,
      a: result.answer,
      at: Date.now(),
      ms: result.ms,
      ...(result.errorAnswer ? { err: true } : {}),
      ...(recorded ? { run: recorded } : {}),
    };
    // The answer is on disk before it is submitted (the submission awaits `durable`): a crash from here on
    // never costs a target call.
    const durable = journal.append(record);
    store.apply(record);
    changed(info);
    // Answers not yet on disk are what a crash would cost in target calls: never more than the window.
    if (journal.backlog > concurrency) await durable;
    if (options.holdAnswers) {
      await durable;
      finishedNow++;
      return 'done';
    }
    return { durable };
  }

  async function submit(info: TraceInfo, signal: AbortSignal): Promise<void> {
    for (let round = 1; ; round++) {
      const again = await submitOnce(info, signal, round < submitRounds);
      if (!again || stopping()) return;
      // The API module already retried this request; a later round outlasts a longer bad patch of the service.
      await sleep(backoffDelay(round, SUBMIT_ROUND_BACKOFF), signal).catch(() => undefined);
      if (signal.aborted) return;
    }
  }

  /** One submission with the API module's retries; true when it failed transiently and may go again. */
  async function submitOnce(info: TraceInfo, signal: AbortSignal, mayRetry: boolean): Promise<boolean> {
    try {
      const result = await client.submitAnswer(kind, evaluationId, info.traceId, info.answer!, { signal });
      const record = { t: 'submitted' as const, id: info.traceId, at: Date.now(), ...(result.requestCode ? { code: result.requestCode } : {}) };
      unreachableStreak = 0;
      submittedNow++;
      finishedNow++;
      store.apply(record);
      changed(info);
      // The acceptance need not hold the trace's slot until it is on disk: losing it to a crash costs one
      // repeated submission, never an answer. The backlog stays within the in-flight window.
      const durable = journal.append(record);
      if (journal.backlog > concurrency) await durable;
      else durable.catch(() => undefined);
      return false;
    } catch (error) {
      if (isAbortError(error) || signal.aborted) return false;
      if (error instanceof AuthError) {
        halt('auth', error.message, error);
        return false;
      }
      const reason = error instanceof Error ? error.message : String(error);
      lastError = reason;
      const unreachable = error instanceof ApiError && (error.reason === 'network' || error.reason === 'timeout');
      if (unreachable && ++unreachableStreak >= maxUnreachable) halt('unreachable', (error as ApiError).message, error);
      if (!unreachable) unreachableStreak = 0;
      // A Retry-After beyond the API module's cap is the service asking for a long pause: not retried in this run.
      const transient =
        error instanceof ApiError && TRANSIENT_SUBMIT_FAILURES.has(error.reason) && (error.retryAfterMs ?? 0) <= SUBMIT_ROUND_BACKOFF.maxDelayMs;
      if (transient && mayRetry && !stop) {
        log('warn', `Submission of trace "${info.traceId}" failed (${reason}); trying again shortly.`);
        return true;
      }
      const record = { t: 'failed' as const, id: info.traceId, reason, stage: 'submit' as const, at: Date.now() };
      logFailure(`Submission of trace "${info.traceId}" failed: ${reason}`);
      store.apply(record);
      finishedNow++;
      changed(info);
      await journal.append(record);
      return false;
    }
  }

  async function worker(): Promise<void> {
    while (!stopping()) {
      const info = queue[next++];
      if (!info) return;
      await handle(info);
    }
  }

  let failure: unknown;
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker));
  } catch (error) {
    failure = error;
  }
  // Submissions handed over finish (or see the stop) before the run reports.
  while (submissions.size > 0) await Promise.all(submissions);
  failure ??= fatal;
  if (failure) return finish('error', `The run failed unexpectedly: ${(failure as Error).message}`, failure);

  if (stop) return finish(stop.outcome, stop.message, stop.error);
  if (hardSignal.aborted || options.drainSignal?.aborted) {
    return finish('cancelled', 'The run was cancelled; every answer received so far is saved and the next run resumes from there.');
  }
  const summary = await finish('completed', undefined);
  if (summary.failed.length > 0) {
    summary.outcome = 'failedTraces';
    summary.message = `${summary.failed.length} trace(s) failed; run again to retry them (journaled answers are not recomputed).`;
  }
  return summary;
}

/** True when the service's list is not the one the store already has (new, removed or changed prompts). */
function differsFromStore(store: TraceStore, prompts: readonly PromptItem[]): boolean {
  if (!store.promptsRecorded || store.listedTotal !== prompts.length) return true;
  for (const { traceId, content } of prompts) if (store.get(traceId)?.prompt !== content) return true;
  return false;
}

function classifyFatal(error: unknown): [RunOutcome, string] {
  if (isAbortError(error)) return ['cancelled', 'The run was cancelled before any trace was handled.'];
  if (error instanceof AuthError) return ['auth', error.message];
  if (error instanceof NotReadyError) return ['notReady', error.message];
  if (error instanceof ApiError && (error.reason === 'network' || error.reason === 'timeout')) return ['unreachable', error.message];
  return ['error', error instanceof Error ? error.message : String(error)];
}
