// How a run's end and its questions are put to the user: the end-of-run notifications, what Cancel means for
// Batch API batches, and the question when the journal's answers came from another target.
import * as vscode from 'vscode';
import { BUTTON } from '../buttons';
import { totalCost, usdText } from '../../core';
import type { RunMode, RunSummary, TargetIdentity } from '../../core';
import type { ConfirmEstimateParams, RefusedParams } from '../../protocol/runnerTypes';
import type { Ctx } from '../ctx';
import { showError } from '../log';
import type { EvaluationRef } from '../evaluations/registry';

/** What a window says when a run it followed ended: the counts, and the next step each outcome calls for. */
export async function reportOutcome(ctx: Ctx, ref: EvaluationRef, s: RunSummary): Promise<void> {
  const c = s.counts;
  const line = `${ref.label}: ${c.submitted}/${s.total} submitted (${s.submittedNow} in this run), ${c.failed} failed.`;
  ctx.log.info(`${line} ${s.targetCalls} target calls in ${(s.durationMs / 1000).toFixed(1)} s.`);
  const invalid = ctx.registry.session(ref).invalidLines;
  if (invalid) ctx.log.warn(`${invalid} line(s) of the journal of ${ref.label} are unreadable or not a record Eval Runner wrote; they were skipped and nothing is submitted from them.`);
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
      const choice = await showError(ctx.log, s.message ?? vscode.l10n.t('The token was rejected.'), BUTTON.setToken);
      if (choice === BUTTON.setToken) await vscode.commands.executeCommand('evalRunner.setToken', ref.id);
      return;
    }
    case 'budget': {
      const choice = await vscode.window.showWarningMessage(budgetWords(ctx, ref, line), BUTTON.openSettings, BUTTON.showProgress);
      if (choice === BUTTON.openSettings) await vscode.commands.executeCommand('workbench.action.openSettings', 'evalRunner.budgetUsd');
      else if (choice) await vscode.commands.executeCommand('evalRunner.showProgress', ref.id);
      return;
    }
    case 'failedTraces': {
      const choice = await showError(ctx.log, `${line} ${s.message ?? ''}`, BUTTON.retryFailed);
      if (choice === BUTTON.retryFailed) await vscode.commands.executeCommand('evalRunner.retryFailed', ref.id);
      return;
    }
    default:
      await showError(ctx.log, `${ref.label}: ${s.message ?? vscode.l10n.t('the run stopped.')}`);
  }
}

/** A budget stop in the editor's words: what the evaluation spent (from the journal) of the budget, and how to go on. */
function budgetWords(ctx: Ctx, ref: EvaluationRef, line: string): string {
  const spent = totalCost(ctx.registry.session(ref).store.runs).usd;
  const budget = ctx.settings.budgetUsd;
  const of = spent !== null && budget !== undefined ? vscode.l10n.t('{0} spent of {1}', usdText(spent), usdText(budget)) : vscode.l10n.t('the spend could pass it');
  return vscode.l10n.t('{0}: budget reached ({1}). {2} Answers so far are saved: raise evalRunner.budgetUsd and run again to go on; nothing is asked twice.', ref.label, of, line);
}

/**
 * Cancel of a run following Batch API batches: abandon them at the provider (cancelled there; their traces go to the
 * target again next time), or only stop following (they go on, and the next run takes them up). Dismissed: follow.
 */
export async function askBatchCancel(): Promise<boolean> {
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

/** The journal's answers came from another target: the same question the CLI asks with --fresh/--reuse-answers. */
export async function askMode(ref: EvaluationRef, refused: RefusedParams, identity: TargetIdentity): Promise<RunMode | undefined> {
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

/** A run whose estimate passes evalRunner.estimateThresholdUsd: the estimate shown, and the run goes on only if asked to. */
export async function askEstimate(ctx: Ctx, ref: EvaluationRef, e: ConfirmEstimateParams): Promise<boolean> {
  const range = e.usd.low === e.usd.high ? usdText(e.usd.high) : `${usdText(e.usd.low)}–${usdText(e.usd.high)}`;
  const go = { label: vscode.l10n.t('Run'), detail: e.text.replace(/\n/g, ' · ') };
  const picked = await ctx.pickItem([go, { label: vscode.l10n.t('Cancel') }], {
    title: vscode.l10n.t('{0}: this run is estimated at {1}, over evalRunner.estimateThresholdUsd ({2}). Run it?', ref.label, range, usdText(e.thresholdUsd)),
    ignoreFocusOut: true,
  });
  return picked === go;
}
