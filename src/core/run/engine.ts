import { commit } from '../store/commit';
import { DEFAULT_SERVICE_PATIENCE_MS } from '../options/runOptions';
import { engineConcurrency, submitPolicy, targetCallPolicy } from './engineOptions';
import type { EngineOptions } from './engineOptions';
import { JournalWriteError } from '../store/listWriter';
import { isAbortError } from '../../api/errors';
import type { Journal } from '../journal/journal';
import { RateScheduler } from './rateScheduler';
import type { SteerEvent } from './runSteering';
import { DEFAULT_MAX_ERROR_RATE, ErrorRateGuard } from './errorRate';
import { hasAnswerToSubmit, planQueue } from './runPlan';
import { inShard } from './shards';
import type { RunPlan, TraceQueue } from './runPlan';
import { listAgain, listPrompts } from './runList';
import type { ListChanges } from './runList';
import { classifyFatal, summarize } from './runSummary';
import type { RunSummary } from './runSummary';
import { RunState } from './runState';
import type { RunOutcome } from './runState';
import { ServiceHold } from './serviceHold';
import { Submitter } from './submissions';
import { TargetCaller } from './targetCalls';
import { TraceHandler, drain } from './traceHandler';
import type { Target } from '../targets/target';
import { batchRunModule } from './batchLoader';
import type { BatchRun } from './batchRun';
import type { StateCounts, TraceInfo, TraceStore } from '../store/traceStore';
import { runBudget } from '../cost/budget';
import { runCost } from '../cost/runCost';
import type { Budget } from '../cost/budget';
import { HeldPrompts } from '../store/heldPrompts';

// What the session and the tests import from the engine, declared where it belongs.
export type { EngineOptions } from './engineOptions';
export type { ListChanges } from './runList';
export type { RunSummary } from './runSummary';

/**
 * One run of an evaluation: list the prompts (robustness: wait for generation), plan what is left, then call
 * the target and submit, each answer journaled before it is submitted. The parts have names of their own:
 * listPrompts (runList.ts: the list journaled), planQueue (what to do), TraceHandler (one trace: target, journal,
 * submission), TargetCaller (calling the target), Submitter (submitting), RunState (counters and the one reason the
 * run stops), summarize (runSummary.ts: how it ended). The options and their defaults: engineOptions.ts (what a user sets: options/runOptions.ts).
 */
export async function runEvaluation(options: EngineOptions): Promise<RunSummary> {
  const engine = new EngineRun(options);
  // 1. The prompts, journaled as they come where they are new or changed.
  let listed: ReadonlySet<string>;
  try {
    listed = await listedToKeep(options, engine);
  } catch (error) {
    if (error instanceof JournalWriteError) {
      engine.run.fail(error.cause);
      return engine.finish();
    }
    return engine.finish(classifyFatal(error));
  }
  // 2. What is left to do: journaled answers are submitted first and never sent to the target again.
  let queue: TraceQueue | undefined;
  try {
    engine.plan();
    if (options.estimateOnly) {
      options.estimateOnly(engine.toCall);
      return engine.finish();
    }
    if (options.confirmCalls && !(await options.confirmCalls(engine.toCall))) {
      engine.run.halt('cancelled', 'Not run: its estimate was not confirmed. Nothing was called or submitted.');
      return engine.finish();
    }
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
 * The prompts listed and journaled; their ids kept only for a robustness run, which reads its list again at its end
 * (runAppeared). Held through a run, 100,000 ids are 1.8 MB of heap, 600,000 are 16 MB. A function of its own: a local
 * of runEvaluation's would stay in its frame until the run ends.
 */
async function listedToKeep(options: EngineOptions, engine: EngineRun): Promise<ReadonlySet<string>> {
  // A batch run takes its prompts as it writes its batches (batchRun.ts), never through a held one.
  const ids = await listPrompts(options, engine.run, options.batch ? undefined : engine.heldPrompts);
  return options.kind === 'robustness' ? ids : new Set();
}

/**
 * One run's parts and the little state they share: the pacing of the target and of the service, the run's
 * record, its plan, the trace handler, and what the list's second reading changed.
 */
class EngineRun {
  readonly run: RunState;
  /** The prompts just listed, for the target calls (heldPrompts.ts). */
  readonly heldPrompts = new HeldPrompts();
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
  /** Adds loops to the queue being drained, when the concurrency is raised mid-run. */
  private widen: ((n: number) => void) | undefined;
  private readonly budget: Budget | undefined;

  constructor(private readonly options: EngineOptions) {
    this.concurrency = engineConcurrency(options);
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
    this.budget = runBudget(options, options.store.runs);
    this.run.onStopping(() => this.hold.release());
    // A paused run that is cancelled ends as an unpaused one does: the traces waiting for a start are let go.
    this.run.onStopping(() => this.targetPace.resume());
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
  async begin(): Promise<TraceQueue | undefined> {
    const { options, run } = this;
    let plan = this.runPlan!;
    if (plan.submitFirst.length + plan.callTarget.length === 0) return [];
    if (plan.callTarget.length > 0 && !(await this.warmUp())) return undefined;
    this.recorded = await recordRun(options, options.store, options.journal);
    // A fresh run's record has set the old answers aside: plan again over what is left.
    if (options.runRecord?.mode === 'fresh' && this.recorded) plan = this.runPlan = planQueue(options.store, this.planOptions());
    this.heldPrompts.retain(plan.callTarget);
    this.showLimitsLive();
    options.steering?.attach({ pace: this.targetPace, widen: (n) => this.widen?.(n), note: (e) => this.noteSteer(e) });
    run.queued = plan.submitFirst.length + plan.callTarget.length;
    if (plan.submitFirst.length) run.log('info', `Resuming: ${plan.submitFirst.length} journaled answer(s) to submit without calling the target again.`);
    return plan.queue;
  }

  /** The planned traces the target would be called for. */
  get toCall(): readonly TraceInfo[] {
    return this.runPlan ? [...this.runPlan.callTarget] : [];
  }

  private planOptions() {
    const o = this.options;
    return { only: o.only, holdAnswers: o.holdAnswers, limit: o.limit, shard: o.shard };
  }

  /** The queue through the target and the service; then, for robustness, what the list gained meanwhile. */
  async work(queue: TraceQueue, listed: ReadonlySet<string>): Promise<void> {
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
    const next = more.queue;
    run.queued += next.length;
    if (more.callTarget.length > 0 && !(await this.warmUp())) return;
    await this.dispatch(next, traces);
    await submitter.settled();
  }

  /** The queue through the target: live calls, or (batch: true) journaled answers live and the rest in batches. */
  private async dispatch(queue: TraceQueue, traces: TraceHandler): Promise<void> {
    const { options, run } = this;
    if (!options.batch) return drain(queue, traces, run, this.targetPace.maxInFlight, (more) => (this.widen = more));
    const all = [...queue];
    const journaled = all.filter(hasAnswerToSubmit);
    const toAnswer = all.filter((t) => !hasAnswerToSubmit(t));
    const policy = targetCallPolicy(options);
    this.batchRun = new (batchRunModule().BatchRun)({
      batch: options.batch,
      journal: options.journal,
      store: options.store,
      run,
      runId: traces.runId,
      concurrency: this.concurrency,
      retries: policy.retries,
      onError: policy.onError,
      deliver: (info, result) => traces.handle(info, result),
      live: (info) => traces.handle(info),
      ...(this.budget ? { budget: this.budget } : {}),
    });
    await Promise.all([drain(journaled, traces, run, this.concurrency), this.batchRun.run(toAnswer)]);
  }

  /** A pause, resume or concurrency change, journaled in the run's history (a failed write is the run's to report). */
  private async noteSteer(event: SteerEvent): Promise<void> {
    const { journal, store } = this.options;
    if (this.recorded) await commit(journal, store, { t: 'steer', run: this.recorded, at: Date.now(), ...event }).catch(() => undefined);
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
    const limit = o.maxErrorRate === 'off' ? undefined : (o.maxErrorRate ?? DEFAULT_MAX_ERROR_RATE);
    return new TargetCaller(o.target, this.targetPace, targetCallPolicy(o), this.run, { kind: o.kind, evaluationId: o.evaluationId }, limit && new ErrorRateGuard(limit), this.budget, this.heldPrompts);
  }

  private submitter(): Submitter {
    const o = this.options;
    return new Submitter(o.client, { kind: o.kind, evaluationId: o.evaluationId }, o.journal, o.store, this.run, submitPolicy(o), this.changed, this.servicePace, this.hold);
  }

  private reportProgress(): void {
    const state = this.hold.state;
    const hold = state ? { ...state, waiting: this.submissions.waiting } : undefined;
    const pacing = { concurrency: this.targetPace.maxInFlight, target: this.targetPace.holdingBack, service: this.servicePace.holdingBack, hold, batch: this.batchRun?.progress() };
    const progress = this.run.progress(this.options.store, pacing);
    // A fresh run sets the old answers aside when its record is written, after the list and the warm-up: until then
    // its progress counts the traces as the run will, not as the last run left them.
    if (this.options.runRecord?.mode === 'fresh' && !this.recorded) progress.counts = setAside(progress.counts);
    if (this.targetPace.isPaused) progress.paused = true;
    const info = this.options.store.runById(this.recorded);
    if (info) progress.cost = runCost(info);
    this.options.onProgress?.(progress);
  }

  /** Ends the run: pacing stopped, the journal flushed, the end record written, the summary. */
  async finish(stop = this.run.stopReason): Promise<RunSummary> {
    const { options, run } = this;
    const { journal, store } = options;
    if (this.ticker) clearInterval(this.ticker);
    options.steering?.detach();
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
    const changes = this.listChanges && (this.listChanges.appeared.length || this.listChanges.vanished.length) ? this.listChanges : undefined;
    await this.recordEnd(outcome, changes);
    const plan = this.runPlan;
    return summarize({
      outcome,
      stop,
      failed,
      store,
      run,
      runId: this.recorded,
      planned: { callTarget: plan?.callTarget.length ?? 0, wanted: plan?.wanted ?? 0, submitFirst: plan?.submitFirst.length ?? 0 },
      listChanges: changes,
      holds: this.hold.events,
      batch: this.batchRun?.summary(),
    });
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
      ...(outcome === 'budget' && this.budget ? { budget: this.budget.state } : {}),
    };
    await commit(journal, store, record).catch(() => undefined);
  }
}

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

/** Counts as a fresh run's record leaves them: every trace waiting again but the skipped ones. */
function setAside(counts: StateCounts): StateCounts {
  const all = Object.values(counts).reduce((a, b) => a + b, 0);
  return { pending: all - counts.skipped, running: 0, answered: 0, submitted: 0, failed: 0, skipped: counts.skipped };
}
