import { join } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../lifecycle';
import { BUTTON } from '../buttons';
import { MIB } from '../../api/client';
import { holdProgressText, progressText, runBasics, WAITING_FOR_WINDOW } from '../../core';
import type { EvaluationSession, RefusedRun, RunMode, RunProgress, RunSummary, TargetIdentity } from '../../core';
import { findRunner, interruptedRun, journalHeld, liveRunner } from '../../protocol/runnerFiles';
import type { StartParams } from '../../protocol/runnerProtocol';
import type { RemoteRun, RemoteRunEvents } from './runnerClient';
import { tellOtherRunner } from './otherRunner';
import { readProxy } from '../settings/settings';
import { extensionVersion } from '../ctx';
import type { Ctx, TargetPlan } from '../ctx';
import { errorText, showError } from '../log';
import { waitForNewToken } from './tokenPause';
import { lmServer } from '../targets/lmTarget';
import type { EvaluationRef } from '../evaluations/registry';

export interface RunRequest {
  /** Only these traces (Run Trace, Retry Failed). */
  only?: ReadonlySet<string>;
  /** How to treat answers another target gave; asked in a modal when the journal has some and this is unset. */
  mode?: RunMode;
  /** Rerun Traces: the `only` traces go to the target again as a new run, without the "another target" question. */
  rerun?: boolean;
}

const UI_PROGRESS_MS = 1000;
// How often a window looks again whether the process named by a cut-short run's runner file or lock has gone.
const LOOK_AGAIN_MS = 1000;

/**
 * Cancel of a run following Batch API batches: abandon them at the provider (cancelled there; their traces go to the
 * target again next time), or only stop following (they go on, and the next run takes them up). Dismissed: follow.
 */
async function askBatchCancel(): Promise<boolean> {
  const abandon = vscode.l10n.t('Abandon the Batches');
  const follow = vscode.l10n.t('Only Stop Following');
  const picked = await vscode.window.showWarningMessage(
    vscode.l10n.t('Stop this run. Its batches are still running at the provider: abandon them there, or only stop following them (the next run takes them up and nothing is sent twice)?'),
    { modal: true },
    abandon,
    follow,
  );
  return picked === abandon;
}

/** Runs through the core engine with a cancellable progress notification and a status bar item. */
export class RunController extends Disposable {
  private readonly status = this._register(vscode.window.createStatusBarItem('evalRunner.run', vscode.StatusBarAlignment.Left, 50));
  private readonly active = new Map<string, { ref: EvaluationRef; progress: RunProgress | undefined }>();
  private running = false;
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

  constructor(private readonly ctx: Ctx) {
    super();
    this.status.name = 'Eval Runner';
    this.status.command = 'evalRunner.showProgress';
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

  private async start(ref: EvaluationRef, session: EvaluationSession, request: RunRequest): Promise<RunSummary | undefined> {
    if (this.ctx.settings.target.type === 'manual') {
      void vscode.window.showInformationMessage(vscode.l10n.t('The manual target has no model to call: fetch the prompts, open each trace and write its answer.'));
      return undefined;
    }
    const token = await this.ctx.tokenFor(ref);
    if (token === undefined) return undefined;
    const plan = await this.ctx.targetPlan();
    if (!plan) return undefined;
    let mode: RunMode = request.mode ?? (request.rerun ? 'reuse' : 'continue');
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
   * if this window had started them: after a reload, an update, or in a window opened later.
   */
  reattach(): void {
    // At activation only tiny files are read: a journal is opened only for a run that is going on or was cut short.
    for (const ref of this.ctx.registry.refs) {
      const journal = this.ctx.registry.journalFileOf(ref);
      const found = findRunner(journal);
      if (found && 'other' in found) {
        this.otherRunners.push(tellOtherRunner(this.ctx, ref.label, found.other.pid));
        continue;
      }
      const live = found?.runner;
      if (!live && !interruptedRun(journal)) continue;
      const session = this.ctx.registry.session(ref);
      if (session.isRunning) continue;
      if (!live) {
        this.offerResume(ref, session);
        continue;
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

  private runInRunner(ref: EvaluationRef, session: EvaluationSession, plan: TargetPlan, token: string, request: RunRequest & { mode: RunMode }): Promise<RunSummary | RefusedRun | undefined> {
    const params = this.startParams(ref, session, plan, token, request);
    this.ctx.log.info(`Run of ${ref.label} at ${ref.origin} with ${plan.identity.description} in a runner process, concurrency ${params.run.concurrency}${request.mode === 'continue' ? '' : `, ${request.mode}`}.`);
    return this.follow(ref, session, (events) => runnerClient().RemoteRun.start(join(this.ctx.extension.extensionPath, 'dist', 'runner.js'), session.journalFile, params, events));
  }

  /** What a runner needs to run as this window would: the settings, the target's plan and secrets, the token. */
  private startParams(ref: EvaluationRef, session: EvaluationSession, plan: TargetPlan, token: string, request: RunRequest & { mode: RunMode }): StartParams {
    const settings = this.ctx.settings;
    return {
      key: session.key,
      baseUrl: ref.baseUrl,
      stateDir: settings.stateDir,
      label: ref.label,
      token,
      encoding: settings.requestEncoding,
      proxy: readProxy(),
      userAgent: this.ctx.userAgent,
      maxListBytes: settings.maxListMegabytes * MIB,
      target: { spec: plan.spec, secrets: plan.secrets, ...(plan.options.cwd ? { cwd: plan.options.cwd } : {}), ...(plan.options.authHint ? { authHint: plan.options.authHint } : {}) },
      identity: plan.identity,
      run: {
        ...this.runSettings(),
        mode: request.mode,
        ...(request.only ? { only: [...request.only], reuseFetchedPrompts: true } : {}),
        ...(request.rerun ? { rerun: true } : {}),
      },
    };
  }

  /** The run's settings, for a run here or in a runner: the core's defaults, as the CLI's (runBasics). */
  private runSettings() {
    const settings = this.ctx.settings;
    return {
      tool: `eval-runner-vscode ${extensionVersion(this.ctx.extension.extension)}`,
      ...runBasics({
        concurrency: settings.concurrency,
        onTargetError: settings.onTargetError,
        holdAnswers: settings.reviewBeforeSubmit,
        waitForGenerationSeconds: settings.waitForGenerationSeconds,
        servicePatienceSeconds: settings.servicePatience,
        ...(settings.maxRequestsPerMinute ? { maxRequestsPerMinute: settings.maxRequestsPerMinute } : {}),
        ...(settings.targetRetries !== undefined ? { targetRetries: settings.targetRetries } : {}),
      }),
    };
  }

  /**
   * Follows a run in a runner process (started here, or found): the toast with Cancel, the status bar, the session's
   * progress for the tree and Process Details. The window may go (a reload): the run does not.
   */
  private async follow(ref: EvaluationRef, session: EvaluationSession, open: (events: RemoteRunEvents) => Promise<RemoteRun | undefined>): Promise<RunSummary | RefusedRun | undefined> {
    this.active.set(ref.id, { ref, progress: undefined });
    this.updateStatus();
    let remote: RemoteRun | undefined;
    // A Cancel while the window is still connecting is passed on once it is.
    let cancelled: boolean | undefined;
    const handle = session.follow({
      cancel: (hard) => {
        if (remote) remote.cancel(hard);
        else cancelled = hard || cancelled === true;
      },
    });
    let summary: RunSummary | RefusedRun | undefined;
    let saves: vscode.Disposable | undefined;
    // A question for a new token that the run no longer needs (it ended, or its patience ran out) goes with it.
    const ended = new AbortController();
    try {
      summary = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: ref.label, cancellable: true }, async (progress, token) => {
        // A run following Batch API batches asks what Cancel means for them; any other run stops at once.
        let batches = false;
        token.onCancellationRequested(() => (batches && remote ? void askBatchCancel().then((abandon) => remote?.cancel(false, abandon)) : session.cancel()));
        const shown = this.progressShown(ref, progress);
        remote = await open({
          progress: (p) => {
            batches = p.batch !== undefined;
            handle.progress(p);
            shown(p);
          },
          log: (level, message) => this.ctx.log[level](message),
          needToken: () => waitForNewToken(this.ctx, ref, ended.signal),
          // A vscode-lm run's prompts: the chat model answers here, whichever window started the run.
          lmSend: lmServer(),
        });
        if (!remote) return undefined;
        this.remotes.add(remote);
        // A python target's workers restart when its file is saved, as in a run here.
        const follows = remote;
        saves = vscode.workspace.onDidSaveTextDocument((doc) => doc.uri.scheme === 'file' && follows.saved(doc.uri.fsPath));
        if (cancelled !== undefined) remote.cancel(cancelled);
        const end = await remote.finished;
        return end && { error: undefined, ...end };
      });
    } catch (error) {
      // Not awaited: the run has ended whether or not the message is dismissed (a new Run may start at once).
      void showError(this.ctx.log, vscode.l10n.t('Running {0} failed: {1}', ref.label, errorText(error)));
    } finally {
      saves?.dispose();
      ended.abort();
      if (remote) this.remotes.delete(remote);
      remote?.detach();
      // The runner wrote the journal: this window reads it before it says the run ended (the tree and Process
      // Details show the run's end at once).
      if (!this.isDisposed) await session.load().catch(() => undefined);
      handle.end(summary?.outcome === 'targetChanged' ? undefined : summary);
      this.active.delete(ref.id);
      this.updateStatus();
    }
    if (this.isDisposed) return summary;
    if (summary && summary.outcome !== 'targetChanged') void this.report(ref, summary);
    // The runner went away without a word (killed, out of memory): say so, and offer to go on from the journal.
    if (!summary && remote) this.offerResume(ref, session);
    return summary;
  }

  /** The toast and the status bar follow a run's progress once a second. */
  private progressShown(ref: EvaluationRef, progress: vscode.Progress<{ message?: string; increment?: number }>): (p: RunProgress) => void {
    let reported = 0;
    let shownAt = 0;
    return (p) => {
      this.active.set(ref.id, { ref, progress: p });
      // Each report animates the toast's bar and lays out the workbench, which at four a second cost the editor's
      // renderer more than the run's own work.
      const now = Date.now();
      if (now - shownAt < UI_PROGRESS_MS) return;
      shownAt = now;
      const done = p.counts.submitted + p.counts.failed + p.counts.skipped;
      const percent = p.total ? (100 * done) / p.total : 0;
      progress.report({ message: progressText('', p).replace(/^: /, ''), increment: Math.max(0, percent - reported) });
      reported = Math.max(reported, percent);
      this.updateStatus();
    };
  }

  private async report(ref: EvaluationRef, s: RunSummary): Promise<void> {
    const c = s.counts;
    const line = `${ref.label}: ${c.submitted}/${s.total} submitted (${s.submittedNow} in this run), ${c.failed} failed.`;
    this.ctx.log.info(`${line} ${s.targetCalls} target calls in ${(s.durationMs / 1000).toFixed(1)} s.`);
    const invalid = this.ctx.registry.session(ref).invalidLines;
    if (invalid) this.ctx.log.warn(`${invalid} line(s) of the journal of ${ref.label} are unreadable or not a record Eval Runner wrote; they were skipped and nothing is submitted from them.`);
    switch (s.outcome) {
      case 'completed': {
        if (c.skipped > 0) {
          // A skip is local: the service cannot complete the evaluation while the trace is unanswered.
          const choice = await vscode.window.showWarningMessage(
            vscode.l10n.t('{0} {1} trace(s) are skipped: the service cannot complete the evaluation while they are unanswered.', line, c.skipped),
            BUTTON.submitNotAnswered,
            BUTTON.showProgress,
          );
          if (choice === BUTTON.submitNotAnswered) await vscode.commands.executeCommand('evalRunner.submitSkipped', ref.id);
          else if (choice) await vscode.commands.executeCommand('evalRunner.showProgress', ref.id);
          return;
        }
        const choice = await vscode.window.showInformationMessage(line, BUTTON.showProgress);
        if (choice) await vscode.commands.executeCommand('evalRunner.showProgress', ref.id);
        return;
      }
      case 'cancelled':
        void vscode.window.showInformationMessage(vscode.l10n.t('{0}: cancelled. {1} Run again to resume; saved answers are not recomputed.', ref.label, line));
        return;
      case 'auth': {
        const choice = await showError(this.ctx.log, s.message ?? vscode.l10n.t('The token was rejected.'), BUTTON.setToken);
        if (choice === BUTTON.setToken) await vscode.commands.executeCommand('evalRunner.setToken', ref.id);
        return;
      }
      case 'failedTraces': {
        const choice = await showError(this.ctx.log, `${line} ${s.message ?? ''}`, BUTTON.retryFailed);
        if (choice === BUTTON.retryFailed) await vscode.commands.executeCommand('evalRunner.retryFailed', ref.id);
        return;
      }
      default:
        await showError(this.ctx.log, `${ref.label}: ${s.message ?? vscode.l10n.t('the run stopped.')}`);
    }
  }

  private updateStatus(): void {
    // The palette offers Cancel Run only while a run runs (set on a change, not on every progress event).
    if (this.running !== this.active.size > 0) {
      this.running = this.active.size > 0;
      void vscode.commands.executeCommand('setContext', 'evalRunner.running', this.running);
    }
    if (this.active.size === 0) {
      this.status.hide();
      return;
    }
    const runs = [...this.active.values()];
    const parts = runs.map(({ ref, progress }) => (progress ? `${progress.counts.submitted}/${progress.total}` : `${ref.kind} ${ref.evaluationId}…`));
    // A run held by the service (down, or refusing the token) says so: its answers wait, nothing is wrong locally.
    // A vscode-lm run with no window to serve its chat model (this window is attaching) says so too.
    const held = runs.flatMap(({ ref, progress: p }) =>
      p?.hold ? [`${ref.label}: ${holdProgressText(p.hold)}`] : p?.waitingFor === 'window' ? [`${ref.label}: ${WAITING_FOR_WINDOW}`] : [],
    );
    // A still icon: the counts change every second, and a spinning one keeps the whole window drawing frames.
    this.status.text = `${held.length ? '$(debug-pause)' : '$(beaker)'} Eval Runner ${parts.join(' · ')}${held.length === 1 && runs.length === 1 ? ` · ${held[0]!.slice(runs[0]!.ref.label.length + 2)}` : ''}`;
    this.status.tooltip = held.length ? held.join('\n') : 'Eval Runner is running; click to show progress';
    this.status.show();
  }
}

/** The journal's answers came from another target: the same question the CLI asks with --fresh/--reuse-answers. */
async function askMode(ref: EvaluationRef, refused: RefusedRun, identity: TargetIdentity): Promise<RunMode | undefined> {
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('{0}: its answers came from another target', ref.label),
    {
      modal: true,
      detail: vscode.l10n.t(
        '{0}\n\n{1}: every trace is answered again by {2} and resubmitted (the service keeps the last answer per trace).\n{3}: the journaled answers are submitted as they are; {2} answers only the traces without one (the run is recorded as mixed).',
        refused.message,
        BUTTON.startFresh,
        identity.description,
        BUTTON.reuseAnswers,
      ),
    },
    BUTTON.startFresh,
    BUTTON.reuseAnswers,
  );
  if (!choice) return undefined;
  return choice === BUTTON.startFresh ? 'fresh' : 'reuse';
}

/** The runner's client with its JSON-RPC library: dist/runnerClient.js, built apart and loaded on the first run. */
function runnerClient(): typeof import('./runnerClient') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./runnerClient.js') as typeof import('./runnerClient');
}
