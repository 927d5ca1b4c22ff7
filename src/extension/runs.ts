import * as vscode from 'vscode';
import { Disposable } from './lifecycle';
import { BUTTON } from './buttons';
import type { ApiClient } from '../api/client';
import { holdProgressText, progressText } from '../core';
import type { EvaluationSession, RefusedRun, RunMode, RunProgress, RunSummary, Target, TargetIdentity } from '../core';
import { extensionVersion } from './ctx';
import type { Ctx } from './ctx';
import { errorText, showError } from './log';
import { waitForNewToken } from './tokenPause';
import type { EvaluationRef } from './registry';

export interface RunRequest {
  /** Only these traces (Run Trace, Retry Failed). */
  only?: ReadonlySet<string>;
  /** How to treat answers another target gave; asked in a modal when the journal has some and this is unset. */
  mode?: RunMode;
  /** Rerun Traces: the `only` traces go to the target again as a new run, without the "another target" question. */
  rerun?: boolean;
}

const UI_PROGRESS_MS = 1000;

/** Runs through the core engine with a cancellable progress notification and a status bar item. */
export class RunController extends Disposable {
  private readonly status = this._register(vscode.window.createStatusBarItem('evalRunner.run', vscode.StatusBarAlignment.Left, 50));
  private readonly active = new Map<string, { ref: EvaluationRef; progress: RunProgress | undefined }>();
  private running = false;

  constructor(private readonly ctx: Ctx) {
    super();
    this.status.name = 'Eval Runner';
    this.status.command = 'evalRunner.showProgress';
  }

  async run(ref: EvaluationRef, request: RunRequest = {}): Promise<RunSummary | undefined> {
    const session = this.ctx.registry.session(ref);
    if (session.isRunning) {
      void vscode.commands.executeCommand('evalRunner.showProgress', ref.id);
      return undefined;
    }
    if (this.ctx.settings.target.type === 'manual') {
      void vscode.window.showInformationMessage(vscode.l10n.t('The manual target has no model to call: fetch the prompts, open each trace and write its answer.'));
      return undefined;
    }
    const client = await this.ctx.clientFor(ref);
    if (!client) return undefined;
    const made = await this.ctx.createTarget();
    if (!made) {
      await client.close();
      return undefined;
    }
    const clients = [client];
    const opened = (c: ApiClient) => clients.push(c);
    try {
      let mode: RunMode = request.mode ?? (request.rerun ? 'reuse' : 'continue');
      for (;;) {
        const result = await this.runOnce(ref, session, { client, ...made, mode, only: request.only, rerun: request.rerun === true, opened });
        if (result?.outcome !== 'targetChanged') return result;
        // The journal's answers came from another target: the same question the CLI asks with --fresh/--reuse-answers.
        const choice = await vscode.window.showWarningMessage(
          vscode.l10n.t('{0}: its answers came from another target', ref.label),
          {
            modal: true,
            detail: vscode.l10n.t(
              '{0}\n\n{1}: every trace is answered again by {2} and resubmitted (the service keeps the last answer per trace).\n{3}: the journaled answers are submitted as they are; {2} answers only the traces without one (the run is recorded as mixed).',
              result.message,
              BUTTON.startFresh,
              made.identity.description,
              BUTTON.reuseAnswers,
            ),
          },
          BUTTON.startFresh,
          BUTTON.reuseAnswers,
        );
        if (!choice) return undefined;
        mode = choice === BUTTON.startFresh ? 'fresh' : 'reuse';
      }
    } finally {
      await made.target.close?.();
      for (const c of clients) await c.close();
    }
  }

  private async runOnce(
    ref: EvaluationRef,
    session: EvaluationSession,
    run: {
      client: ApiClient;
      target: Target;
      identity: TargetIdentity;
      mode: RunMode;
      only: ReadonlySet<string> | undefined;
      rerun: boolean;
      /** Clients made for a new token during the run, closed with it. */
      opened: (client: ApiClient) => void;
    },
  ): Promise<RunSummary | RefusedRun | undefined> {
    const settings = this.ctx.settings;
    this.ctx.log.info(`Run of ${ref.label} at ${ref.origin} with ${run.identity.description}, concurrency ${settings.concurrency}${run.mode === 'continue' ? '' : `, ${run.mode}`}.`);
    this.active.set(ref.id, { ref, progress: undefined });
    this.updateStatus();
    try {
      const summary = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: ref.label, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => session.cancel());
          let reported = 0;
          let shownAt = 0;
          return session.run({
            client: run.client,
            target: run.target,
            identity: run.identity,
            mode: run.mode,
            tool: `eval-runner-vscode ${extensionVersion(this.ctx.extension.extension)}`,
            concurrency: settings.concurrency,
            onTargetError: settings.onTargetError,
            holdAnswers: settings.reviewBeforeSubmit,
            ...(settings.maxRequestsPerMinute ? { maxRequestsPerMinute: settings.maxRequestsPerMinute } : {}),
            waitForGenerationMs: settings.waitForGenerationSeconds * 1000,
            servicePatienceMs: settings.servicePatienceSeconds * 1000,
            // A rejected token pauses the run until a new one is set (the CLI stops with exit 3 instead).
            newClient: (signal) => waitForNewToken(this.ctx, ref, signal, run.opened),
            targetTimeoutMs: 600_000,
            progressIntervalMs: 250,
            ...(run.only ? { only: run.only, reuseFetchedPrompts: true } : {}),
            ...(run.rerun ? { rerun: true } : {}),
            onProgress: (p) => {
              this.active.set(ref.id, { ref, progress: p });
              // The toast and the status bar follow once a second: each report animates the toast's bar and lays
              // out the workbench, which at four a second cost the editor's renderer more than the run's own work.
              const now = Date.now();
              if (now - shownAt < UI_PROGRESS_MS) return;
              shownAt = now;
              const done = p.counts.submitted + p.counts.failed + p.counts.skipped;
              const percent = p.total ? (100 * done) / p.total : 0;
              progress.report({ message: progressText('', p).replace(/^: /, ''), increment: Math.max(0, percent - reported) });
              reported = Math.max(reported, percent);
              this.updateStatus();
            },
            onLog: (level, message) => this.ctx.log[level](message),
          });
        },
      );
      // Reported without waiting: the command ends when the run does, not when a toast is dismissed.
      if (summary.outcome !== 'targetChanged') void this.report(ref, summary);
      return summary;
    } catch (error) {
      await showError(this.ctx.log, vscode.l10n.t('Running {0} failed: {1}', ref.label, errorText(error)));
      return undefined;
    } finally {
      this.active.delete(ref.id);
      this.updateStatus();
    }
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
    const held = runs.filter((r) => r.progress?.hold).map((r) => `${r.ref.label}: ${holdProgressText(r.progress!.hold!)}`);
    // A still icon: the counts change every second, and a spinning one keeps the whole window drawing frames.
    this.status.text = `${held.length ? '$(debug-pause)' : '$(beaker)'} Eval Runner ${parts.join(' · ')}${held.length === 1 && runs.length === 1 ? ` · ${held[0]!.slice(runs[0]!.ref.label.length + 2)}` : ''}`;
    this.status.tooltip = held.length ? held.join('\n') : 'Eval Runner is running; click to show progress';
    this.status.show();
  }
}
