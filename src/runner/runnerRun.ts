import { basename, dirname } from 'node:path';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { createApiClient } from '../api/client';
import type { ApiClient } from '../api/client';
import { createBatchTarget, createTarget, estimateTarget, estimateText, EvaluationSession, hostedView, hostRun, RunSteering } from '../core';
import type { BatchTarget, HostRunRequest, RunPrice, RunProgress, Target, TargetSpec, TraceInfo } from '../core';
import { confirmEstimate, finished, log, needToken, progress } from '../protocol/runnerProtocol';
import type { RunFinished, RunnerState, RunViewParams, StartParams, ViewParams } from '../protocol/runnerProtocol';
import { startedCost, startedRun, targetSpecOf } from './startParams';
import { WindowLm } from './windowLm';

// Progress crosses the socket at most this often: the windows redraw once a second anyway.
const PROGRESS_MS = 250;

/** The one run a runner hosts: the core's session, its progress told to every attached window. */
export class RunnerRun {
  private readonly session: EvaluationSession;
  private last: RunProgress | undefined;
  private done: RunFinished | undefined;
  private tokenWanted: (() => void) | undefined;
  private target: Target | undefined;
  /** A chat model of the editor: its calls go to an attached window. */
  private readonly lm: WindowLm;
  /** The user chose to abandon the run's batches at the provider when cancelling it. */
  private abandon = false;
  /** Pause, resume and concurrency from any window or `eval-runner pause` (the protocol's steering requests). */
  readonly steering = new RunSteering();

  constructor(
    private readonly params: StartParams,
    private readonly windows: ReadonlySet<MessageConnection>,
    private readonly ended: (code: number) => void,
  ) {
    this.session = new EvaluationSession(params.key, params.stateDir);
    this.lm = new WindowLm(windows, () => this.last && this.progressed(this.last));
  }

  /** What Run Details shows of the run: its figures and these traces, from the store this run keeps current. */
  readonly view: (ids: string[], rows?: ViewParams['rows']) => RunViewParams = hostedView(() => this.session.store);

  state(): RunnerState {
    return { label: this.params.label, key: this.params.key, progress: this.last && this.shown(this.last), finished: this.done };
  }

  cancel(hard: boolean, abandonBatches = false): void {
    this.abandon ||= abandonBatches;
    // Calls waiting for a window have nothing in flight to finish: a cancel stops them at once, leaving their traces
    // pending (a drain would wait for a window that may never come).
    this.session.cancel(hard || this.lm.waitingForWindow);
  }

  /** A file was saved in the editor: the python target's workers restart when it is in the target's folder. */
  saved(path: string): void {
    const spec = targetSpecOf(this.params.target.spec);
    if (spec.type !== 'python' || !path.endsWith('.py') || dirname(path) !== dirname(spec.file) || !this.target || !('restart' in this.target)) return;
    this.tell('info', `${basename(path)} was saved: the Python workers restart before the next trace.`);
    (this.target as Target & { restart(): void }).restart();
  }

  /**
   * A window attached to the run (after a reload, or a window opened later): journaled with the run; a question for a
   * token and the chat model's calls waiting for a window go to it now.
   */
  attached(): void {
    if (!this.done) void this.session.noteWindow('attached');
    this.tokenWanted?.();
    const waited = this.lm.attached();
    // The run said so in its progress while nobody could see it: the window that came says it in its log.
    if (waited !== undefined) this.tell('info', `The chat model's calls waited ${Math.round(waited / 1000)} s for a VS Code window to serve them; this window serves them now.`);
  }

  /** A window let go of the run (a reload, a closed window): journaled with the run while it goes on. */
  detached(): void {
    if (!this.done) void this.session.noteWindow('detached');
  }

  async go(): Promise<void> {
    const p = this.params;
    let outcome: RunFinished;
    try {
      const targetOptions = {
        connections: p.run.concurrency,
        proxy: p.proxy,
        ...(p.target.cwd ? { cwd: p.target.cwd } : {}),
        ...(p.target.authHint ? { authHint: p.target.authHint } : {}),
        onLog: (level: 'info' | 'warn', message: string) => this.tell(level, message),
        lm: (model: string | undefined) => this.lm.target(model),
      };
      const spec = targetSpecOf(p.target.spec);
      const { cost, unbudgeted } = startedCost(p);
      if (unbudgeted) this.tell('warn', unbudgeted);
      const request: HostRunRequest = {
        client: this.client(p.token),
        targets: () => {
          this.target = createTarget(spec, p.target.secrets, targetOptions);
          return { target: this.target, batch: createBatchTarget(spec, p.target.secrets, targetOptions) };
        },
        ...startedRun(p),
        ...cost,
        ...(cost.price && p.cost?.estimateThresholdUsd !== undefined ? { confirmCalls: this.confirmer(spec, cost.price, p.cost.estimateThresholdUsd) } : {}),
        progressIntervalMs: PROGRESS_MS,
        onProgress: (now) => this.progressed(now),
        onLog: (level, message) => this.tell(level, message),
        ...(p.askForToken === false ? {} : { newClient: (signal: AbortSignal) => this.newClient(signal) }),
        steering: this.steering,
      };
      outcome = await hostRun(this.session, request, async ({ result, batch }) => {
        if (this.abandon && batch) await this.abandonBatches(batch);
        // Undefined only for a rerun subset with no trace in it, which a window never sends (it looks first).
        if (!result) return failedToStart(new Error('Nothing was run.'));
        return result.outcome === 'targetChanged' ? { outcome: result.outcome, message: result.message } : withoutError(result);
      });
    } catch (error) {
      outcome = failedToStart(error);
    }
    this.done = outcome;
    for (const w of this.windows) void w.sendNotification(finished, outcome).catch(() => undefined);
    this.ended(0);
  }

  /**
   * Before any call, the run's estimate (estimateTarget, as run --estimate's): over the threshold, a window is asked
   * to confirm it. No window to ask, or one that went away: not confirmed, nothing is spent unasked.
   */
  private confirmer(spec: TargetSpec, price: RunPrice, thresholdUsd: number): (traces: readonly TraceInfo[]) => Promise<boolean> {
    return async (traces) => {
      const estimate = estimateTarget(traces.map((t) => t.prompt ?? ''), spec, price, this.session.store.runs);
      if (!estimate.usd || estimate.usd.high <= thresholdUsd) return true;
      const window = [...this.windows][0];
      if (!window) return false;
      try {
        return (await window.sendRequest(confirmEstimate, { text: estimateText(estimate), usd: estimate.usd, thresholdUsd })).go === true;
      } catch {
        return false;
      }
    };
  }

  /** Cancels the evaluation's open batches at the provider (the editor's Cancel, when the user chose so). */
  private async abandonBatches(batch: BatchTarget): Promise<void> {
    try {
      const ids = await this.session.abandonBatches(batch, new AbortController().signal);
      if (ids.length) this.tell('info', `Abandoned ${ids.length} batch(es) at the provider (${ids.join(', ')}): their traces go to the target again on the next run.`);
    } catch (error) {
      this.tell('warn', `The batches could not be abandoned at the provider (${error instanceof Error ? error.message : String(error)}); they stay open and the next run takes them up.`);
    }
  }

  private client(token: string): ApiClient {
    const p = this.params;
    return createApiClient({ baseUrl: p.baseUrl, token, encoding: p.encoding, connections: p.run.concurrency, userAgent: p.userAgent, proxy: p.proxy, ...(p.maxListBytes ? { maxListBytes: p.maxListBytes } : {}) });
  }

  private progressed(now: RunProgress): void {
    this.last = now;
    const shown = this.shown(now);
    for (const w of this.windows) void w.sendNotification(progress, shown).catch(() => undefined);
  }

  /** The engine's progress, and whether the chat model's calls wait for a window. */
  private shown(p: RunProgress): RunProgress {
    const { waitingFor: _was, ...rest } = p;
    return this.lm.waitingForWindow ? { ...rest, waitingFor: 'window' } : rest;
  }

  private tell(level: 'info' | 'warn' | 'error', message: string): void {
    for (const w of this.windows) void w.sendNotification(log, { level, message }).catch(() => undefined);
  }

  /**
   * The service rejected the token: an attached window asks its user for a new one. While none is attached the
   * run waits for one (the run's progress says it is paused for a token).
   */
  private async newClient(signal: AbortSignal): Promise<ApiClient | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      const window = [...this.windows][0];
      if (!window) {
        this.tell('warn', 'The run waits for a window to attach and give a new token.');
        await new Promise<void>((resolve) => {
          this.tokenWanted = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        this.tokenWanted = undefined;
        continue;
      }
      try {
        const answer = await untilAborted(window.sendRequest(needToken), signal);
        return answer?.token ? this.client(answer.token) : undefined;
      } catch {
        // That window went away while asking: ask the next one.
      }
    }
  }
}

/** The promise's value, or undefined once the signal aborts first (the run stopped, or its patience ran out). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function withoutError(summary: RunFinished & { error?: unknown }): RunFinished {
  const { error: _error, ...rest } = summary;
  return rest;
}

/** A run that could not even be set up (the target's spec refused): told as a run that stopped with an error. */
function failedToStart(error: unknown): RunFinished {
  const message = error instanceof Error ? error.message : String(error);
  return {
    outcome: 'error',
    message,
    total: 0,
    counts: { pending: 0, running: 0, answered: 0, submitted: 0, failed: 0, skipped: 0 },
    submittedNow: 0,
    targetCalls: 0,
    rateLimitedCalls: 0,
    failed: [],
    durationMs: 0,
    runningMs: 0,
    runId: undefined,
    planned: { callTarget: 0, wanted: 0, submitFirst: 0 },
    holds: [],
  };
}
