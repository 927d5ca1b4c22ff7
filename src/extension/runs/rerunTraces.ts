// Rerun Traces…: a subset of an evaluation's traces goes to the current target again as a new run, then Compare Runs
// shows just those traces, before and after (the loop of editing your own code).
import * as vscode from 'vscode';
import { previousRun, RERUN_SUBSETS, selectTraces } from '../../core';
import type { RerunSubset } from '../../core';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import type { EvaluationRef } from '../evaluations/registry';
import { pickEvaluation } from '../pick';

/** The picker's label of each named subset (read when shown: vscode.l10n.t needs the extension's bundle loaded). */
const SUBSET_LABELS: Record<(typeof RERUN_SUBSETS)[number], () => string> = {
  failed: () => vscode.l10n.t('Failed traces'),
  bad: () => vscode.l10n.t('Answers marked bad'),
  noted: () => vscode.l10n.t('Answers with a note'),
};

/**
 * Rerun Traces…: the failed, those marked bad, those with a note, or those that differ between the last two
 * runs go to the current target as a new run (no "another target" question: the user chose them); then
 * Compare Runs opens on the run that gave their previous answers and the new one, showing only them.
 */
export async function rerunTraces(ctx: Ctx, f: Features, arg: unknown, subsetArg?: unknown, shownArg?: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return;
  const session = ctx.registry.session(ref);
  await session.load();
  const shown = Array.isArray(shownArg) ? shownArg.filter((id): id is string => typeof id === 'string') : undefined;
  const subset = isSubset(subsetArg) ? subsetArg : await askSubset(ctx, ref, shown);
  if (!subset) return;
  // For what the window says and shows only (the runner picks the same from the same journal, and runs that): no
  // runner is started for nothing, and Compare Runs sets the new run beside the run that answered these before.
  const { ids } = selectTraces(session.store, subset);
  if (ids.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('{0}: no trace to rerun in that choice.', ref.label));
    return;
  }
  const before = previousRun(session.store, ids);
  const result = await f.runs.run(ref, { subset });
  if (!result?.runId || !before) return;
  const a = session.store.runById(before);
  const b = session.store.runById(result.runId);
  if (a && b) await f.compare.compare(ref, a, b, new Set(ids));
}

function isSubset(value: unknown): value is RerunSubset {
  return (typeof value === 'string' && (RERUN_SUBSETS as readonly string[]).includes(value)) || (typeof value === 'object' && value !== null && Array.isArray((value as { ids?: unknown }).ids));
}

async function askSubset(ctx: Ctx, ref: EvaluationRef, shown: string[] | undefined): Promise<RerunSubset | undefined> {
  const store = ctx.registry.session(ref).store;
  const items: Array<vscode.QuickPickItem & { subset: RerunSubset }> = RERUN_SUBSETS.map((s) => ({
    label: SUBSET_LABELS[s](),
    description: String(selectTraces(store, s).ids.length),
    subset: s,
  }));
  const runs = store.runs;
  if (runs.length >= 2) {
    const [prev, last] = [runs[runs.length - 2]!, runs[runs.length - 1]!];
    const differing = (await ctx.registry.session(ref).compare(prev.runId, last.runId)).filter((r) => r.differs && r.a && r.b).map((r) => r.traceId);
    items.push({ label: vscode.l10n.t('Answers that differ between the last two runs'), description: String(differing.length), detail: `${prev.target} → ${last.target}`, subset: { ids: differing } });
  }
  if (shown?.length) items.push({ label: vscode.l10n.t('The rows shown in Run Details'), description: String(shown.length), subset: { ids: shown } });
  const picked = await ctx.pickItem(items, { title: vscode.l10n.t('Rerun Traces: which?'), placeHolder: vscode.l10n.t('They run again with the current target, as a new run') });
  return picked?.subset;
}
