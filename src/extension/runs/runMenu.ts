// Run Actions…: what a click on the run's status bar item offers (also in the palette while a run runs): Open Run
// Details, Pause or Resume, Set Concurrency…, Cancel, each the command it names, for a run this window follows
// whoever started it.
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import type { EvaluationRef } from '../evaluations/registry';
import { pickEvaluation } from '../pick';

interface RunAction extends vscode.QuickPickItem {
  command: string;
}

export async function runActions(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const running = ctx.registry.refs.filter((r) => ctx.registry.session(r).isRunning);
  const ref = arg === undefined && running.length === 1 ? running[0] : await pickEvaluation(ctx, arg, running);
  if (!ref) {
    if (running.length === 0) void vscode.window.showInformationMessage(vscode.l10n.t('No evaluation is running.'));
    return;
  }
  const pick = await vscode.window.showQuickPick(runActionItems(ctx, ref), { title: vscode.l10n.t('The run of {0}', ref.label) });
  if (pick) await vscode.commands.executeCommand(pick.command, ref.id);
}

/** The menu's items for a run, as its last progress says it stands (paused or not, at what concurrency). */
export function runActionItems(ctx: Ctx, ref: EvaluationRef): RunAction[] {
  const p = ctx.registry.session(ref).lastProgress;
  const items: RunAction[] = [{ label: `$(graph) ${vscode.l10n.t('Open Run Details')}`, command: 'evalRunner.showProgress' }];
  if (!ctx.registry.session(ref).isRunning) return items;
  items.push(
    p?.paused
      ? { label: `$(debug-continue) ${vscode.l10n.t('Resume')}`, description: vscode.l10n.t('paused: target calls start again'), command: 'evalRunner.resumeRun' }
      : { label: `$(debug-pause) ${vscode.l10n.t('Pause')}`, description: vscode.l10n.t('the calls in flight finish, no new one starts'), command: 'evalRunner.pauseRun' },
    {
      label: `$(settings-gear) ${vscode.l10n.t('Set Concurrency…')}`,
      ...(p ? { description: vscode.l10n.t('now at most {0} in flight', p.targetConcurrency) } : {}),
      command: 'evalRunner.setRunConcurrency',
    },
    { label: `$(debug-stop) ${vscode.l10n.t('Cancel')}`, command: 'evalRunner.cancelRun' },
  );
  return items;
}
