import { commit } from '../journal/commit';
import { DEFAULT_SERVICE_PATIENCE_MS } from '../options/runOptions';
import { streamPromptsOf } from './promptList';
import { JournalWriteError, ListWriter } from '../journal/listWriter';
import type { ApiClient } from '../../api/client';
import { ApiError, AuthError, NotReadyError, isAbortError } from '../../api/errors';
import type { EvaluationKind } from '../../api/kinds';
import type { PromptItem } from '../../api/schemas';
import type { Journal } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import { RateScheduler } from './rateScheduler';
import { planQueue } from './runPlan';
import { inShard } from './shards';
import type { Shard } from './shards';
import type { RunPlan } from './runPlan';
import { RunState, waitingText } from './runState';
import type { Log } from './runState';
import type { RunOutcome, RunProgress } from './runState';
import { ServiceHold } from './serviceHold';
import type { HoldEvent } from './serviceHold';
import { Submitter } from './submissions';
import { TargetCaller } from './targetCalls';
import type { OnTargetError, TargetResult } from './targetCalls';
import type { Target } from '../targets/target';
import { batchRunModule } from './batchLoader';
import type { BatchRun, BatchSummary } from './batchRun';
import type { BatchTarget } from '../targets/openai/openaiBatch';
import type { StateCounts, TraceInfo, TraceStore } from '../store/traceStore';

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
  /**
   * Further tries of a failing target call (rate limits aside). Unset: 2 for passing failures (a crashed worker, a
   * 503) and none for an exception the user's own code raised; set (--target-retries N): N for both.
   */
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
  /** A fixed cap on target requests per minute (--max-rpm); the pace is learned under it. */
  maxRequestsPerMinute?: number;
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
  /** How long the service may be down (gateway errors, refused connections, time-outs) before the run stops. */
  servicePatienceMs?: number;
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
}

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

/**
 * One run of an evaluation: list the prompts (robustness: wait for generation), plan what is left, then call
 * the target and submit, each answer journaled before it is submitted. The parts have names of their own:
 * planQueue (what to do), TargetCaller (calling the target), Submitter (submitting), RunState (counters and
 * the one reason the run stops).
 */
export async function runEvaluation(options: EngineOptions): Promise<RunSummary> {
  const engine = new EngineRun(options);
  // 1. The prompts, journaled as they come where they are new or changed.
  let listed: ReadonlySet<string>;
  try {
    listed = await listPrompts(options, engine.run);
  } catch (error) {
    if (error instanceof JournalWriteError) {
      engine.run.fail(error.cause);
      return engine.finish();
    }
    return engine.finish(classifyFatal(error));
  }
  // 2. What is left to do: journaled answers are submitted first and never sent to the target again.
  let queue: TraceInfo[] | undefined;
  try {
    engine.plan();
    // 3. The target warmed up, then the run recorded: a run that cannot start leaves the record as it was.
    queue = await engine.begin();
  } catch (error) {
    engine.run.fail(error);
    return engine.finish();
  }
  // 4. Call the target and submit, `concurrency` traces at a time; then the list once more (robustness).
  if (queue) await engine.work(queue, listed);
  return engine.finish();
}

/**
 * One run's parts and the little state they share: the pacing of the target and of the service, the run's
 * record, its plan, the trace handler, and what the list's second reading changed.
 */
class EngineRun {
  readonly run: RunState;
  private readonly concurrency: number;
  private readonly targetPace: RateScheduler;
  /** The service's pace: unpaced until it answers 429, then the same learning as the target's. */
  private readonly servicePace: RateScheduler;
  private readonly hold: ServiceHold;
  private readonly submissions: Submitter;
  private readonly ticker: NodeJS.Timeout | undefined;
  private readonly changed: (info: TraceInfo) => void;
  private recorded: string | undefined;
  private runPlan: RunPlan | undefined;
  private listChanges: ListChanges | undefined;
  private batchRun: BatchRun | undefined;

  constructor(private readonly options: EngineOptions) {
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.run = new RunState(options.onLog ?? (() => undefined), options.signal ?? new AbortController().signal, options.drainSignal);
    this.targetPace = new RateScheduler({
      concurrency: this.concurrency,
      ...(options.maxRequestsPerMinute ? { maxPerSecond: options.maxRequestsPerMinute / 60 } : {}),
      // A local process has no rate limit to spare: its first calls start together, not spread over a second.
      ...(options.target.local ? { initialPerSecond: Infinity } : {}),
    });
    this.servicePace = new RateScheduler({ concurrency: this.concurrency, initialPerSecond: Infinity });
    this.changed = (info) => options.onTraceChange?.(info);
    this.hold = new ServiceHold(
      { giveUp: (outcome, message, error) => this.run.halt(outcome, message, error), log: (level, message) => this.run.log(level, message), stopping: () => this.run.stopping },
      options.servicePatienceMs ?? DEFAULT_SERVICE_PATIENCE_MS,
      options.newClient,
      (client) => this.submissions.useClient(client),
    );
    this.submissions = this.submitter();
    this.run.onStopping(() => this.hold.release());
    // Progress is sampled on a timer, never per trace: 100,000 traces do not mean 100,000 events.
    this.ticker = options.onProgress ? setInterval(() => this.reportProgress(), options.progressIntervalMs ?? 250) : undefined;
  }

  /** Plans the run (the list is registered); nothing is journaled yet. */
  plan(): void {
    const { run, options } = this;
    run.phase = 'running';
    run.runningSince = Date.now();
    const fresh = options.runRecord?.mode === 'fresh';
    this.runPlan = planQueue(options.store, { ...this.planOptions(), ignoreAnswers: fresh || (options.rerun === true && options.only !== undefined) });
  }

  /**
   * Starts the planned run: the target warmed up (when it is to be called), then the run's record journaled (a fresh
   * one sets the old answers aside). undefined: the target could not start, and nothing was recorded.
   */
  async begin(): Promise<TraceInfo[] | undefined> {
    const { options, run } = this;
    let plan = this.runPlan!;
    if (plan.submitFirst.length + plan.callTarget.length === 0) return [];
    if (plan.callTarget.length > 0 && !(await this.warmUp())) return undefined;
    this.recorded = await recordRun(options, options.store, options.journal);
    // A fresh run's record has set the old answers aside: plan again over what is left.
    if (options.runRecord?.mode === 'fresh' && this.recorded) plan = this.runPlan = planQueue(options.store, this.planOptions());
    this.showLimitsLive();
    run.queued = plan.submitFirst.length + plan.callTarget.length;
    if (plan.submitFirst.length) run.log('info', `Resuming: ${plan.submitFirst.length} journaled answer(s) to submit without calling the target again.`);
    return [...plan.submitFirst, ...plan.callTarget];
  }

  private planOptions() {
    const o = this.options;
    return { only: o.only, holdAnswers: o.holdAnswers, limit: o.limit, shard: o.shard };
  }

  /** The queue through the target and the service; then, for robustness, what the list gained meanwhile. */
  async work(queue: readonly TraceInfo[], listed: ReadonlySet<string>): Promise<void> {
    const { options, run } = this;
    const submitter = this.submissions;
    const traces = new TraceHandler(this.caller(), submitter, options.journal, options.store, run, this.concurrency, options.holdAnswers === true, this.recorded, this.changed);
    try {
      await this.dispatch(queue, traces);
      // Submissions handed over finish (or see the stop) before the run reports.
      await submitter.settled();
      await this.runAppeared(listed, traces, submitter);
    } catch (error) {
      run.fail(error);
      await submitter.settled();
    } finally {
      traces.detach();
    }
  }

  /**
   * The list once more: robustness generation may still have been adding prompts when it was first read; those
   * run in this run. (A benchmark's list is fixed: reading 100,000 prompts again would cost the run for nothing.)
   */
  private async runAppeared(listed: ReadonlySet<string>, traces: TraceHandler, submitter: Submitter): Promise<void> {
    const { options, run } = this;
    if (options.kind !== 'robustness' || run.stopping || options.only || options.prompts || options.journaledPrompts || options.limit !== undefined) return;
    this.listChanges = await listAgain(options, options.store, options.journal, run, listed);
    if (!this.listChanges?.appeared.length) return;
    if (!this.recorded) {
      this.recorded = await recordRun(options, options.store, options.journal);
      traces.runId = this.recorded;
      this.showLimitsLive();
    }
    const more = planQueue(options.store, { only: new Set(this.listChanges.appeared), holdAnswers: options.holdAnswers, shard: options.shard });
    const next = [...more.submitFirst, ...more.callTarget];
    run.queued += next.length;
    if (more.callTarget.length > 0 && !(await this.warmUp())) return;
    await this.dispatch(next, traces);
    await submitter.settled();
  }

  /** The queue through the target: live calls, or (batch: true) journaled answers live and the rest in batches. */
  private async dispatch(queue: readonly TraceInfo[], traces: TraceHandler): Promise<void> {
    const { options, run } = this;
    if (!options.batch) return drain(queue, traces, run, this.concurrency);
    const journaled = queue.filter(hasJournaledAnswer);
    const toAnswer = queue.filter((t) => !hasJournaledAnswer(t));
    this.batchRun = new (batchRunModule().BatchRun)({
      batch: options.batch,
      journal: options.journal,
      store: options.store,
      run,
      runId: traces.runId,
      concurrency: this.concurrency,
      retries: options.targetRetries ?? 2,
      onError: options.onTargetError ?? 'fail',
      deliver: (info, result) => traces.handle(info, result),
      live: (info) => traces.handle(info),
    });
    await Promise.all([drain(journaled, traces, run, this.concurrency), this.batchRun.run(toAnswer)]);
  }

  /** The run's rate limits, seen live by views of the store (journaled with the run's end). */
  private showLimitsLive(): void {
    const info = this.options.store.runById(this.recorded);
    if (info) info.rateLimitTimes = this.run.rateLimitTimes;
  }

  private warmUp(): Promise<boolean> {
    return this.options.target.warmUp ? warmUp(this.options.target, this.run) : Promise.resolve(true);
  }

  private caller(): TargetCaller {
    const o = this.options;
    const policy = {
      retries: o.targetRetries ?? 2,
      userCodeRetries: o.targetRetries ?? 0,
      timeoutMs: o.targetTimeoutMs ?? 600_000,
      maxRetryAfterMs: o.maxTargetRetryAfterMs ?? 300_000,
      maxQuotaStrikes: o.maxQuotaStrikes ?? 3,
      maxRateLimitRetries: o.maxRateLimitRetries ?? 20,
      onError: o.onTargetError ?? 'fail',
    };
    return new TargetCaller(o.target, this.targetPace, policy, this.run, { kind: o.kind, evaluationId: o.evaluationId });
  }

  private submitter(): Submitter {
    const o = this.options;
    const policy = { concurrency: this.concurrency, rounds: Math.max(1, o.submitRounds ?? SUBMIT_ROUNDS), ahead: o.aheadOfService ?? DEFAULT_AHEAD };
    return new Submitter(o.client, { kind: o.kind, evaluationId: o.evaluationId }, o.journal, o.store, this.run, policy, this.changed, this.servicePace, this.hold);
  }

  private reportProgress(): void {
    const state = this.hold.state;
    const hold = state ? { ...state, waiting: this.submissions.waiting } : undefined;
    const pacing = { concurrency: this.concurrency, target: this.targetPace.holdingBack, service: this.servicePace.holdingBack, hold, batch: this.batchRun?.progress() };
    const progress = this.run.progress(this.options.store, pacing);
    // A fresh run sets the old answers aside when its record is written, after the list and the warm-up: until then
    // its progress counts the traces as the run will, not as the last run left them.
    if (this.options.runRecord?.mode === 'fresh' && !this.recorded) progress.counts = setAside(progress.counts);
    this.options.onProgress?.(progress);
  }

  /** Ends the run: pacing stopped, the journal flushed, the end record written, the summary. */
  async finish(stop = this.run.stopReason): Promise<RunSummary> {
    const { options, run } = this;
    const { journal, store } = options;
    if (this.ticker) clearInterval(this.ticker);
    this.targetPace.dispose();
    this.servicePace.dispose();
    await journal.flush();
    // A write that failed unawaited (an acceptance's record) still decides the outcome: the journal is behind.
    if (journal.failure !== undefined && stop?.outcome !== 'storage') {
      run.fail(journal.failure);
      stop = run.stopReason;
    }
    run.phase = 'done';
    this.reportProgress();
    this.hold.closeAtEnd();
    const failed = [...store.inState('failed')]
      .filter((t) => (!options.only || options.only.has(t.traceId)) && (!options.shard || inShard(t.traceId, options.shard)))
      .map((t) => ({ traceId: t.traceId, reason: t.error ?? 'unknown reason' }));
    const outcome: RunOutcome = stop?.outcome ?? (failed.length ? 'failedTraces' : 'completed');
    // Answers journaled and not submitted, when the service or the token stopped the run: the next run sends them.
    const waiting = outcome === 'auth' || outcome === 'unreachable' ? store.counts.answered : 0;
    const waitingNote = waiting ? ` ${waiting} answer(s) are journaled and waiting; run again once that is mended: they are submitted without calling the target again.` : '';
    const changes = this.listChanges && (this.listChanges.appeared.length || this.listChanges.vanished.length) ? this.listChanges : undefined;
    await this.recordEnd(outcome, changes);
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
      runId: this.recorded,
      planned: { callTarget: this.runPlan?.callTarget.length ?? 0, wanted: this.runPlan?.wanted ?? 0, submitFirst: this.runPlan?.submitFirst.length ?? 0 },
      ...(changes ? { listChanges: changes } : {}),
      holds: this.hold.events,
      ...(this.batchRun ? { batch: this.batchRun.summary() } : {}),
    };
  }

  private async recordEnd(outcome: RunOutcome, changes: ListChanges | undefined): Promise<void> {
    const { journal, store } = this.options;
    if (!this.recorded || journal.failure !== undefined) return;
    const limited = this.run.rateLimitTimes;
    const record = {
      t: 'end' as const,
      run: this.recorded,
      at: Date.now(),
      outcome,
      ...(changes ? { appeared: changes.appeared.slice(0, 1000), vanished: changes.vanished.slice(0, 1000) } : {}),
      ...(limited.length ? { limited: [...limited] } : {}),
      ...(this.hold.events.length ? { holds: this.hold.events.slice(0, 1000) } : {}),
    };
    await commit(journal, store, record).catch(() => undefined);
  }
}

/** Hands the queued traces to `concurrency` loops until the queue is empty or the run stops. */
async function drain(queue: readonly TraceInfo[], traces: TraceHandler, run: RunState, concurrency: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (!run.stopping) {
      const info = queue[next++];
      if (!info) return;
      await traces.handle(info);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker));
}

/** What changed between the list a run started with and the list at its end. */
export interface ListChanges {
  /** Traces listed at the end and not at the start: run in the same run. */
  appeared: string[];
  /** Traces listed at the start and not at the end: reported, never failed. */
  vanished: string[];
}

/** Lists the prompts again after the last submission; undefined when the list could not be read (said, not fatal). */
async function listAgain(
  options: EngineOptions,
  store: TraceStore,
  journal: Journal,
  run: RunState,
  before: ReadonlySet<string>,
): Promise<ListChanges | undefined> {
  let items: PromptItem[];
  try {
    items = await options.client.listPrompts(options.kind, options.evaluationId, { signal: run.hardSignal });
  } catch (error) {
    if (run.hardSignal.aborted) return undefined;
    run.log('warn', `The prompt list could not be read again at the end of the run (${error instanceof Error ? error.message : String(error)}); the run's answers stand.`);
    return undefined;
  }
  const after = new Set(items.map((p) => p.traceId));
  const changes = { appeared: [...after].filter((id) => !before.has(id)), vanished: [...before].filter((id) => !after.has(id)) };
  if (changes.appeared.length) {
    run.log('info', `The service lists ${changes.appeared.length} trace(s) more than at the start of the run (first: "${changes.appeared[0]}"); they run now.`);
    const list = new ListWriter(store, journal, (m) => run.log('warn', m));
    await list.add(items);
    await list.end();
  }
  if (changes.vanished.length) {
    run.log('warn', `${changes.vanished.length} trace(s) listed at the start are no longer listed by the service (first: "${changes.vanished[0]}"); they are reported, not failed.`);
  }
  return changes;
}

// Answers journaled ahead of a service that is down before the target waits too: the journal holds them, so this
// only bounds how much a run does that nobody can see submitted yet.
const DEFAULT_AHEAD = 256;

// By default, a submission that failed all of the API module's attempts for a passing reason gets this many
// rounds, paused between, before the trace is marked failed.
const SUBMIT_ROUNDS = 3;

/** Lets the target get ready before the first trace; false (and the run halted) when it cannot be set up. */
async function warmUp(target: Target, run: RunState): Promise<boolean> {
  try {
    await target.warmUp!(run.hardSignal);
    return true;
  } catch (error) {
    if (run.hardSignal.aborted || isAbortError(error)) return false;
    const message = error instanceof Error ? error.message : String(error);
    run.halt('error', `${message} The run stopped before any trace was sent; fix it and run again.`, error);
    return false;
  }
}

/** Journals the run's record (once there is work to do: a run with nothing to do leaves no trace). */
async function recordRun(options: EngineOptions, store: TraceStore, journal: Journal): Promise<string | undefined> {
  if (!options.runRecord) return undefined;
  await commit(journal, store, options.runRecord);
  return options.runRecord.run;
}

/**
 * The service's list (for robustness, after waiting for generation; the wait shows in progress), registered as it
 * comes; the ids listed. A benchmark's list is fixed: when the journal holds all of it and every trace is submitted,
 * there is nothing to list it again for (a run with nothing to do reads no 200 MB list).
 */
async function listPrompts(options: EngineOptions, run: RunState): Promise<ReadonlySet<string>> {
  const { client, kind, evaluationId, store } = options;
  const allDone = kind === 'benchmark' && options.runRecord?.mode !== 'fresh' && store.promptsRecorded && store.counts.submitted === store.total && store.total === store.listedTotal;
  if (options.journaledPrompts || allDone) {
    const journaled = new Set([...store.traces.values()].filter((t) => t.hasPrompt).map((t) => t.traceId));
    // A journal with no prompts yet (Run Trace before any list): listed after all.
    if (journaled.size > 0) return journaled;
  }
  const list = new ListWriter(store, options.journal, (m) => run.log('warn', m));
  if (options.prompts) {
    await list.add(options.prompts);
    return list.end();
  }
  if (kind === 'robustness') run.phase = 'waiting';
  // A first Ctrl-C (drain) ends the wait for generation too: while no prompt has come, nothing is in flight. Once the
  // list flows, only a second one (hard) stops it.
  let flowing = false;
  const stop = new AbortController();
  const stopWait = () => {
    if (!flowing || run.hardSignal.aborted) stop.abort(run.hardSignal.reason ?? new DOMException('The run was cancelled.', 'AbortError'));
  };
  if (run.stopping) stopWait();
  run.onStopping(stopWait);
  // Journaled as it streams in: a 600,000-prompt list is never held whole.
  await streamPromptsOf(client, kind, evaluationId, (batch) => {
    flowing = true;
    return list.add(batch);
  }, {
    waitForGenerationMs: options.waitForGenerationMs ?? 0,
    signal: stop.signal,
    onWait: (e) => {
      run.waiting = { reason: e.reason, nextCheckAt: Date.now() + e.delayMs };
      run.log('info', `Waiting for the adversarial prompts of evaluation ${evaluationId}: ${waitingText(run.waiting)}.`);
    },
  });
  run.waiting = undefined;
  return list.end();
}

/**
 * One trace through the run: its answer from the journal or the target, journaled, then handed to the
 * submitter. Each trace in flight has its own controller, fanned out from one listener on the run's signal,
 * so requests and sleeps only ever listen on short-lived signals.
 */
class TraceHandler {
  private readonly inflight = new Set<AbortController>();
  private readonly onHardAbort = () => {
    for (const c of this.inflight) c.abort(this.run.hardSignal.reason);
  };

  constructor(
    private readonly caller: TargetCaller,
    private readonly submitter: Submitter,
    private readonly journal: Journal,
    private readonly store: TraceStore,
    private readonly run: RunState,
    private readonly concurrency: number,
    private readonly holdAnswers: boolean,
    public runId: string | undefined,
    private readonly changed: (info: TraceInfo) => void,
  ) {
    run.hardSignal.addEventListener('abort', this.onHardAbort, { once: true });
  }

  detach(): void {
    this.run.hardSignal.removeEventListener('abort', this.onHardAbort);
  }

  /** One trace to the target and the service; with `given`, an answer (or failure) that came otherwise (a batch's). */
  async handle(info: TraceInfo, given?: TargetResult): Promise<void> {
    const controller = new AbortController();
    if (this.run.hardSignal.aborted) controller.abort(this.run.hardSignal.reason);
    this.inflight.add(controller);
    let handedOver = false;
    try {
      const answer = given === undefined ? await this.answer(info, controller.signal) : await this.record(info, given);
      if (answer === 'done' || this.run.halted || controller.signal.aborted) return;
      handedOver = true;
      await this.submitter.handOver(info, answer.durable, controller.signal, () => this.inflight.delete(controller));
    } finally {
      if (!handedOver) this.inflight.delete(controller);
    }
  }

  /** Gets the trace an answer (unless the journal has one); 'done' when there is nothing to submit now. */
  private async answer(info: TraceInfo, signal: AbortSignal): Promise<'done' | { durable: Promise<void> | undefined }> {
    if (hasJournaledAnswer(info)) return { durable: undefined };
    this.store.setTransient(info.traceId, 'running');
    this.changed(info);
    let result: TargetResult;
    try {
      result = await this.caller.call(info, signal);
    } catch (error) {
      if (!isAbortError(error) && !signal.aborted) throw error;
      result = 'stopped';
    }
    return this.record(info, result);
  }

  /** Journals the target's answer (or failure); 'done' when there is nothing to submit now. */
  private async record(info: TraceInfo, result: TargetResult): Promise<'done' | { durable: Promise<void> | undefined }> {
    if (result === 'stopped') {
      this.store.setTransient(info.traceId, 'pending');
      this.changed(info);
      return 'done';
    }
    if ('fail' in result) {
      const record = { t: 'failed' as const, id: info.traceId, reason: result.fail, stage: 'target' as const, at: Date.now() };
      this.run.logFailure(`Trace "${info.traceId}" failed at the target: ${result.fail}`);
      await commit(this.journal, this.store, record);
      this.run.finishedNow++;
      this.changed(info);
      return 'done';
    }
    // No copy of the prompt: the journal's prompts record, written before any answer, holds it.
    const record = {
      t: 'answer' as const,
      id: info.traceId,
      a: result.answer,
      at: Date.now(),
      ms: result.ms,
      ...(result.queueMs !== undefined ? { qw: result.queueMs } : {}),
      ...(result.batchSize !== undefined ? { bs: result.batchSize } : {}),
      ...(result.usage?.promptTokens !== undefined ? { tp: result.usage.promptTokens } : {}),
      ...(result.usage?.completionTokens !== undefined ? { tc: result.usage.completionTokens } : {}),
      ...(result.ttftMs !== undefined ? { ft: result.ttftMs } : {}),
      ...(result.errorAnswer ? { err: true } : {}),
      ...(this.runId ? { run: this.runId } : {}),
    };
    // The answer is on disk before it is submitted (the submission awaits `durable`): a crash from here on
    // never costs a target call.
    const durable = commit(this.journal, this.store, record);
    // Awaited later (by the submission, or below); a failed write is seen there, not as an unhandled rejection.
    durable.catch(() => undefined);
    this.changed(info);
    // Answers not yet on disk are what a crash would cost in target calls: never more than the window.
    if (this.journal.backlog > this.concurrency) await durable;
    if (this.holdAnswers) {
      await durable;
      this.run.finishedNow++;
      return 'done';
    }
    return { durable };
  }
}

/** The journal holds an answer to submit for this trace: it is never sent to the target again. */
function hasJournaledAnswer(info: TraceInfo): boolean {
  return info.hasAnswer && (info.state === 'answered' || info.failedStage === 'submit');
}

function classifyFatal(error: unknown): { outcome: RunOutcome; message: string; error: unknown } {
  if (isAbortError(error)) return { outcome: 'cancelled', message: 'The run was cancelled before any trace was handled.', error };
  if (error instanceof AuthError) return { outcome: 'auth', message: error.message, error };
  if (error instanceof NotReadyError) return { outcome: 'notReady', message: error.message, error };
  if (error instanceof ApiError && (error.reason === 'network' || error.reason === 'timeout')) return { outcome: 'unreachable', message: error.message, error };
  return { outcome: 'error', message: error instanceof Error ? error.message : String(error), error };
}

/** Counts as a fresh run's record leaves them: every trace waiting again but the skipped ones. */
function setAside(counts: StateCounts): StateCounts {
  const all = Object.values(counts).reduce((a, b) => a + b, 0);
  return { pending: all - counts.skipped, running: 0, answered: 0, submitted: 0, failed: 0, skipped: counts.skipped };
}
