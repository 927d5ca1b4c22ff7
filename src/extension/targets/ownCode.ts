import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { absoluteCommand, previousRun, RERUN_SUBSETS, selectTraces } from '../../core';
import type { RerunSubset } from '../../core';
import type { TargetSettings } from '../settings/settingsModel';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import type { EvaluationRef } from '../evaluations/registry';
import { pickEvaluation } from '../pick';

/**
 * The user's own code as the target, in the editor: pick a Python function, restart its workers when the file
 * (or a .py file beside it) is saved, and the loop: Rerun Traces, then Compare Runs on just those traces.
 */

/** Top-level functions of a Python source, in file order ("def x(" or "async def x(" at the start of a line). */
export function topLevelFunctions(source: string): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/^(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(/gm)) if (!names.includes(m[1]!)) names.push(m[1]!);
  return names;
}

/** Select Target → Python function: a .py file of the workspace, then one of its top-level functions. */
export async function pickPythonTarget(ctx: Ctx): Promise<TargetSettings | undefined> {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  let file: vscode.Uri | undefined;
  const found = root ? await vscode.workspace.findFiles('**/*.py', '**/{node_modules,.venv,venv,.git,__pycache__,site-packages}/**', 2000) : [];
  if (found.length > 0) {
    const picked = await ctx.pickItem(
      found
        .map((uri) => ({ label: vscode.workspace.asRelativePath(uri, false), uri }))
        .sort((a, b) => a.label.localeCompare(b.label)),
      { title: vscode.l10n.t('Python function (1/2): which file?'), matchOnDescription: true },
    );
    file = picked?.uri;
  } else {
    file = (await vscode.window.showOpenDialog({ title: vscode.l10n.t('Python function: which file?'), filters: { Python: ['py'] }, canSelectMany: false }))?.[0];
  }
  if (!file) return undefined;
  const source = Buffer.from(await vscode.workspace.fs.readFile(file)).toString('utf8');
  const functions = topLevelFunctions(source);
  if (functions.length === 0) {
    void vscode.window.showWarningMessage(vscode.l10n.t('{0} has no top-level function: add e.g. "def answer(prompt):" and try again.', vscode.workspace.asRelativePath(file, false)));
    return undefined;
  }
  const ordered = functions.includes('answer') ? ['answer', ...functions.filter((f) => f !== 'answer')] : functions;
  const fn = await ctx.pickItem(
    ordered.map((name) => ({ label: name })),
    { title: vscode.l10n.t('Python function (2/2): which function answers a prompt?') },
  );
  if (!fn) return undefined;
  // Stored with its full path: a relative one would mean whichever workspace is open (a cloned repository's own file
  // of the same name), and in Restricted Mode it is refused.
  return { type: 'python', file: file.fsPath, function: fn.label };
}

/** Select Target → Worker: a long-lived command speaking the worker protocol. */
export async function pickWorkerTarget(): Promise<TargetSettings | undefined> {
  const command = await vscode.window.showInputBox({
    title: vscode.l10n.t('Worker command'),
    prompt: vscode.l10n.t('Started once per worker, without a shell: JSON lines in ({"id","prompt","traceId"}) and out ({"id","answer"})'),
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Required.')),
  });
  if (!command) return undefined;
  // Its files with their full paths, as a Python function's file: relative ones would mean whichever workspace is open.
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  return { type: 'worker', command: root?.scheme === 'file' ? absoluteCommand(command.trim(), root.fsPath, existsSync) : command.trim() };
}

const SUBSET_LABELS: Record<(typeof RERUN_SUBSETS)[number], string> = {
  failed: 'Failed traces',
  bad: 'Answers marked bad',
  noted: 'Answers with a note',
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
  const { ids } = selectTraces(session.store, subset);
  if (ids.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('{0}: no trace to rerun in that choice.', ref.label));
    return;
  }
  const before = previousRun(session.store, ids);
  const result = await f.runs.run(ref, { only: new Set(ids), rerun: true });
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
    label: SUBSET_LABELS[s],
    description: String(selectTraces(store, s).ids.length),
    subset: s,
  }));
  const runs = store.runs;
  if (runs.length >= 2) {
    const [prev, last] = [runs[runs.length - 2]!, runs[runs.length - 1]!];
    const differing = (await ctx.registry.session(ref).compare(prev.runId, last.runId)).filter((r) => r.differs && r.a && r.b).map((r) => r.traceId);
    items.push({ label: 'Answers that differ between the last two runs', description: String(differing.length), detail: `${prev.target} → ${last.target}`, subset: { ids: differing } });
  }
  if (shown?.length) items.push({ label: 'The rows shown in Process Details', description: String(shown.length), subset: { ids: shown } });
  const picked = await ctx.pickItem(items, { title: vscode.l10n.t('Rerun Traces: which?'), placeHolder: vscode.l10n.t('They run again with the current target, as a new run') });
  return picked?.subset;
}
