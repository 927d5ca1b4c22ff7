// A run's lifecycle in the window: Run starts one in a runner process and follows it; a window that opens finds the
// runs going on (and those cut short) and follows them (or offers Resume). Shown by statusBar.ts, ended by outcomes.ts.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../lifecycle';
import { journalLockPid } from '../../core';
import type { EvaluationSession, RunMode, RunProgress, RunSummary } from '../../core';
import type { RefusedParams } from '../../protocol/runnerTypes';
import { findRunner, interruptedRun, journalHeld, liveRunner } from '../../protocol/runnerFiles';
import type { RemoteRun, RemoteRunEvents } from './runnerClient';
import { otherRunnerPid, tellOtherRunner } from './otherRunner';
import type { Ctx, TargetPlan } from '../ctx';
import { errorText, showError } from '../log';
import { waitForNewToken } from './tokenPause';
import { lmServer } from '../targets/lmTarget';
import type { EvaluationRef } from '../evaluations/registry';
import { askBatchCancel, askEstimate, askMode, reportOutcome } from './outcomes';
import { startParams } from './startParams';
import type { RunRequest } from './startParams';
import { RunStatus } from './statusBar';
import { ProgressPace } from '../progressPace';

export type { RunRequest } from './startParams';

// How often a window looks again for runs: whether the process named by a cut-short run's runner file or lock has
// gone, and, for a while after it opens, for a runner that had not yet said where it listens.
const LOOK_AGAIN_MS = 1000;
// How long that while is: a runner's starter waits as long for it to say where it listens (waitForRunnerFile).
const LOOK_FOR_RUNS_MS = 15_000;

/** Runs through the core engine with a cancellable progress notification and a status bar item. */
export class RunController extends Disposable {
  private readonly status = this._register(new RunStatus());
  /** Evaluations this window offered to resume (for the tests). */
  readonly resumeOffered: string[] = [];
  /** What this window said of runs in a runner of another version (for the tests). */
  readonly otherRunners: string[] = [];
  /** Runs in runner processes this window follows. */
  private readonly remotes = new Set<RemoteRun>();
  /** Evaluations whose Run is starting (asking for the token, planning the target), not followed yet. */
  private readonly starting = new Set<string>();
  /** Evaluations whose interrupted run this window waits to offer (see offerResume). */
  private readonly offering = new Set<string>();
  /** The runners of another version this window named (evaluation and pid): each is named once. */
  private readonly told = new Set<string>();

  constructor(private readonly ctx: Ctx) {
    super();
    // The window goes (a reload, an update, closing): its runs go on, unless the user asked that closing ends them.
    this._register({
      dispose: () => {
        for (const remote of this.remotes) {
          if (!this.ctx.settings.keepRunsAlive) remote.cancel(false);
          remote.detach();
        }
      },
    });
  }

  async run(ref: EvaluationRef, request: RunRequest = {}): Promise<RunSummary | undefined> {
    const session = this.ctx.registry.session(ref);
    // Starting takes a while (the token, the target's plan) before the run is followed: a second Run meanwhile (a
    // double click) must not start a second runner.
    if (session.isRunning || this.starting.has(ref.id)) {
      void vscode.commands.executeCommand('evalRunner.showProgress', ref.id);
      return undefined;
    }
    this.starting.add(ref.id);
    try {
      return await this.start(ref, session, request);
    } finally {
      this.starting.delete(ref.id);
    }
  }

  private async start(listed: EvaluationRef, session: EvaluationSession, request: RunRequest): Promise<RunSummary | undefined> {
    if (this.ctx.settings.target.type === 'manual') {
      void vscode.window.showInformationMessage(vscode.l10n.t('The manual target has no model to call: fetch the prompts, open each trace and write its answer.'));
      return undefined;
    }
    const token = await this.ctx.tokenFor(listed);
    if (token === undefined) return undefined;
    // Taken once the token is: the sandbox, started for it, may listen elsewhere than where it was listed.
    const ref = this.ctx.current(listed);
    const plan = await this.ctx.targetPlan();
    if (!plan) return undefined;
    let mode: RunMode = request.mode ?? 'continue';
    for (;;) {
      // Every target runs in a runner process of its own; a chat model of the editor answers it through this window.
      const result = await this.runInRunner(ref, session, plan, token, { ...request, mode });
      if (result?.outcome !== 'targetChanged') return result;
      const chosen = await askMode(ref, result, plan.identity);
      if (!chosen) return undefined;
      mode = chosen;
    }
  }

  /**
   * Finds the runs in progress of this window's evaluations (a runner says so beside the journal) and follows them as
   * if this window had started them: after a reload, an update, or in a window opened later. Looks again each second
   * for a while: a runner started just before a reload says where it listens only a moment later.
   */
  reattach(): void {
    const until = Date.now() + LOOK_FOR_RUNS_MS;
    const look = (first: boolean) => {
      for (const ref of this.ctx.registry.refs) this.lookFor(ref, first);
      this.lookTimer = Date.now() < until ? setTimeout(() => look(false), LOOK_AGAIN_MS) : undefined;
    };
    this._register({ dispose: () => clearTimeout(this.lookTimer) });
    look(true);
    // A run started later elsewhere (eval-runner run, another window) is followed, and so steerable here, once its
    // journal changes: its runner file is beside it by then.
    // (Only a run not followed looks: a followed one changes the session with each progress.)
    this._register(this.ctx.registry.onDidChangeSession((ref) => !this.status.has(ref.id) && findRunner(this.ctx.registry.journalFileOf(ref)) && this.lookFor(ref, false)));
  }

  /** What the toast and the status bar last drew of an evaluation's run (for the tests). */
  lastDrawn(refId: string): RunProgress | undefined {
    return this.status.lastDrawn(refId);
  }

  /** The window is still looking for runs going on (for a few seconds after it opened). */
  get lookingForRuns(): boolean {
    return this.lookTimer !== undefined;
  }
  private lookTimer: NodeJS.Timeout | undefined;

  /** A run of this evaluation going on (followed), cut short (offered), or in a runner of another version (named). */
  /** A run an agent's tool started in a runner (src/extension/agentTools): followed as one started elsewhere. */
  followStarted(ref: EvaluationRef): void {
    this.lookFor(ref, false);
  }

  private lookFor(ref: EvaluationRef, first: boolean): void {
    // Followed already, or starting here. (One waiting to be offered is looked at too: a runner this window could not
    // attach to a moment ago, taken for dying, may be well and going on.)
    if (this.status.has(ref.id) || this.starting.has(ref.id)) return;
    // Only tiny files are read: a journal is opened only for a run that is going on or was cut short.
    const journal = this.ctx.registry.journalFileOf(ref);
    const found = findRunner(journal);
    if (found && 'other' in found) {
      this.tellOther(ref, found.other.pid);
      return;
    }
    const live = found?.runner;
    if (!live && !interruptedRun(journal)) return;
    // Looking again, a runner is followed once its run holds the journal: one whose run ended (this window's own,
    // lingering a moment) is not followed again.
    if (live && !first && journalLockPid(journal) !== live.pid) return;
    const session = this.ctx.registry.session(ref);
    if (session.isRunning) return;
    if (!live) {
      // A run cut short is offered once, from the first look; later looks are for runners that were not there yet.
      if (first) this.offerResume(ref, session);
      return;
    }
    this.ctx.log.info(`Attaching to the run of ${ref.label} in progress (runner pid ${live.pid}).`);
    void this.follow(ref, session, async (events) => {
      const found = await runnerClient().RemoteRun.attach(session.journalFile, events);
      if (found?.state.finished) found.run.detach();
      return found && !found.state.finished ? found.run : undefined;
    }).then((summary) => {
      // The runner seen a moment ago may have been dying (killed, its exit not yet done): the window could not
      // attach, and the run it left cut short is offered as any other (the check refuses a run that ended).
      if (!summary && !this.isDisposed) this.offerResume(ref, session);
    });
  }

  /** A run of this evaluation in a runner of another version: named once, with what to do. */
  private tellOther(ref: EvaluationRef, pid: number): void {
    const key = `${ref.id} ${pid}`;
    if (!this.told.has(key)) this.otherRunners.push(tellOtherRunner(this.ctx, ref.label, pid));
    this.told.add(key);
  }

  /**
   * A run that ended with no word (its runner was killed, the machine restarted, the window of a run here closed):
   * once the journal is read, the window offers to resume it; journaled answers are not asked for again. Once per
   * evaluation at a time: a run lost while attaching is offered by follow and by reattach alike.
   */
  private offerResume(ref: EvaluationRef, session: EvaluationSession): void {
    if (this.offering.has(ref.id)) return;
    this.offering.add(ref.id);
    // A runner killed hard is alive (not even a zombie) for a while after its socket closed: its exit is still
    // under way, and a loaded machine stretches that to tens of milliseconds. Its end changes nothing in the
    // journal, so while a process still names itself the run's, the window looks again rather than wait for a change.
    let looking: NodeJS.Timeout | undefined;
    const stop = () => {
      off();
      clearTimeout(looking);
      this.offering.delete(ref.id);
    };
    const check = () => {
      clearTimeout(looking);
      looking = undefined;
      const run = session.store.currentRun;
      if (!run || run.endedAt !== undefined || session.isRunning) return;
      if (liveRunner(session.journalFile) || journalHeld(session.journalFile)) {
        looking = setTimeout(check, LOOK_AGAIN_MS);
        return;
      }
      stop();
      this.resumeOffered.push(ref.id);
      const resume = vscode.l10n.t('Resume');
      void vscode.window
        .showWarningMessage(vscode.l10n.t('{0}: the run started {1} was interrupted before it ended. Resume it? Answers already journaled are not asked for again.', ref.label, new Date(run.startedAt).toLocaleString()), resume)
        .then((choice) => {
          if (choice === resume) void this.run(ref);
        });
    };
    const off = session.onDidChange(check);
    this._register({ dispose: stop });
    check();
  }

  private runInRunner(ref: EvaluationRef, session: EvaluationSession, plan: TargetPlan, token: string, request: RunRequest & { mode: RunMode }): Promise<RunSummary | RefusedParams | undefined> {
    const params = startParams(this.ctx, ref, session, plan, token, request);
    this.ctx.log.info(`Run of ${ref.label} at ${ref.origin} with ${plan.identity.description} in a runner process, concurrency ${params.run.concurrency}${request.subset ? ', a rerun' : request.mode === 'continue' ? '' : `, ${request.mode}`}.`);
    return this.follow(ref, session, (events) => runnerClient().RemoteRun.start(join(this.ctx.extension.extensionPath, 'dist', 'runner.js'), session.journalFile, params, events));
  }

  /**
   * Follows a run in a runner process (started here, or found): the toast with Cancel, the status bar, the session's
   * progress for the tree and Run Details. The window may go (a reload): the run does not.
   */
  private async follow(ref: EvaluationRef, session: EvaluationSession, open: (events: RemoteRunEvents) => Promise<RemoteRun | undefined>): Promise<RunSummary | RefusedParams | undefined> {
    this.status.started(ref);
    let remote: RemoteRun | undefined;
    // A Cancel while the window is still connecting is passed on once it is.
    let cancelled: boolean | undefined;
    const handle = session.follow({
      cancel: (hard) => {
        if (remote) remote.cancel(hard);
        else cancelled = hard || cancelled === true;
      },
      // Run Details asks the runner for its rows and figures rather than reading the journal meanwhile.
      view: async (ids, rows) => remote?.view(ids, rows),
    });
    let summary: RunSummary | RefusedParams | undefined;
    let other: number | undefined;
    let saves: vscode.Disposable | undefined;
    let pace: ProgressPace<RunProgress> | undefined;
    // A question for a new token that the run no longer needs (it ended, or its patience ran out) goes with it.
    const ended = new AbortController();
    try {
      summary = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: ref.label, cancellable: true }, async (progress, token) => {
        // A run following Batch API batches asks what Cancel means for them; any other run stops at once.
        let batches = false;
        token.onCancellationRequested(() => (batches && remote ? void askBatchCancel().then((abandon) => remote?.cancel(false, abandon)) : session.cancel()));
        const shown = this.status.progressShown(ref, progress);
        // One coalesced stream, whatever the runner's rate: the tree, Run Details, the status bar and the toast all
        // draw the same update, a few times a second; the run's last one is flushed before the toast closes.
        pace = new ProgressPace<RunProgress>((p) => {
          shown(p);
          handle.progress(p);
        });
        const paced = pace;
        remote = await open({
          progress: (p) => {
            batches = p.batch !== undefined;
            paced.push(p);
          },
          log: (level, message) => this.ctx.log[level](message),
          needToken: () => waitForNewToken(this.ctx, ref, ended.signal),
          // A vscode-lm run's prompts: the chat model answers here, whichever window started the run.
          lmSend: lmServer(),
          confirmEstimate: (estimate) => askEstimate(this.ctx, ref, estimate),
        });
        if (!remote) return undefined;
        this.remotes.add(remote);
        // A python target's workers restart when its file is saved, as in a run here.
        const follows = remote;
        saves = vscode.workspace.onDidSaveTextDocument((doc) => doc.uri.scheme === 'file' && follows.saved(doc.uri.fsPath));
        if (cancelled !== undefined) remote.cancel(cancelled);
        const end = await remote.finished;
        paced.dispose();
        return end && { error: undefined, ...end };
      });
    } catch (error) {
      // A runner whose hello spoke another version (its file said ours) is a run of another Eval Runner version,
      // not a failure of this one: told as such.
      other = otherRunnerPid(error);
      // Not awaited: the run has ended whether or not the message is dismissed (a new Run may start at once).
      if (other === undefined) void showError(this.ctx.log, vscode.l10n.t('Running {0} failed: {1}', ref.label, errorText(error)));
    } finally {
      pace?.dispose();
      saves?.dispose();
      ended.abort();
      if (remote) this.remotes.delete(remote);
      remote?.detach();
      // The runner wrote the journal: this window reads it before it says the run ended (the tree and Process
      // Details show the run's end at once), from the index the runner's end left.
      if (!this.isDisposed) await session.loadAfterRun().catch(() => undefined);
      handle.end(summary?.outcome === 'targetChanged' ? undefined : summary);
      this.status.ended(ref);
    }
    // Told once this window no longer follows it, so what the user reads and what the window does agree.
    if (other !== undefined) this.tellOther(ref, other);
    if (this.isDisposed) return summary;
    if (summary && summary.outcome !== 'targetChanged') void reportOutcome(this.ctx, ref, summary);
    // The runner went away without a word (killed, out of memory): say so, and offer to go on from the journal.
    if (!summary && remote) this.offerResume(ref, session);
    return summary;
  }
}

/** The runner's client with its JSON-RPC library: dist/runnerClient.js, built apart and loaded on the first run. */
function runnerClient(): typeof import('./runnerClient') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./runnerClient.js') as typeof import('./runnerClient');
}
