import * as vscode from 'vscode';
import { MAX_NOTE_LENGTH } from '../core';
import type { RunInfo } from '../core';
import type { Ctx } from './ctx';
import type { Features } from './features';
import { pickEvaluation, pickTrace } from './pick';
import { neighbourTrace, openReview } from './review';

/** The trace a verdict command acts on, with its session: undefined (and said why) when it has no answer yet. */
async function pickAnswered(ctx: Ctx, arg: unknown, traceArg: unknown) {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (!picked) return undefined;
  const session = ctx.registry.session(picked.ref);
  const trace = session.store.get(picked.traceId);
  if (trace?.answer === undefined) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Trace {0} has no answer to judge yet.', picked.traceId));
    return undefined;
  }
  return { session, trace };
}

/** Marks the trace's answer good or bad; marking it again with the same verdict clears it. */
export async function markVerdict(ctx: Ctx, rating: 'good' | 'bad', arg: unknown, traceArg: unknown): Promise<void> {
  const found = await pickAnswered(ctx, arg, traceArg);
  if (found) await found.session.setVerdict(found.trace.traceId, found.trace.rating === rating ? undefined : rating, found.trace.note);
}

export async function editNote(ctx: Ctx, arg: unknown, traceArg: unknown): Promise<void> {
  const found = await pickAnswered(ctx, arg, traceArg);
  if (!found) return;
  const { session, trace } = found;
  const note = await vscode.window.showInputBox({
    title: vscode.l10n.t('Note on the answer to {0}', trace.traceId),
    prompt: vscode.l10n.t('Kept in the local journal and exports, never sent to the service. Empty clears it.'),
    value: trace.note ?? '',
    validateInput: (v) => (v.length > MAX_NOTE_LENGTH ? vscode.l10n.t('At most {0} characters.', MAX_NOTE_LENGTH) : undefined),
  });
  if (note === undefined) return;
  await session.setVerdict(trace.traceId, trace.rating, note);
}

/** Opens the next (or previous) trace in the review editor, from the one in front. */
export async function stepTrace(ctx: Ctx, step: 1 | -1, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (!picked) return;
  const next = neighbourTrace(ctx, picked.ref, picked.traceId, step);
  if (next !== undefined) await openReview(picked.ref, next, { preview: true });
}

/** Asks for two runs of one evaluation, newest first; undefined when there are not two or the user cancels. */
export async function pickTwoRuns(ctx: Ctx, arg: unknown): Promise<{ refId: string; a: RunInfo; b: RunInfo } | undefined> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return undefined;
  const session = ctx.registry.session(ref);
  await session.load();
  const runs = [...session.runs].reverse();
  if (runs.length < 2) {
    void vscode.window.showInformationMessage(
      runs.length === 0
        ? vscode.l10n.t('{0} has no runs so far. Run it, then run it with another target (Select Target, then Run → Start Fresh) to compare.', ref.label)
        : vscode.l10n.t('{0} has one run so far. Run it with another target (Select Target, then Run → Start Fresh) to compare.', ref.label),
    );
    return undefined;
  }
  const items = runs.map((r) => ({
    label: r.target,
    description: `${new Date(r.startedAt).toLocaleString()} · ${r.answered} answered`,
    detail: vscode.l10n.t('run {0}', r.runId),
    run: r,
  }));
  const first = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Compare Runs of {0} (1/2): the first run', ref.label), matchOnDetail: true });
  if (!first) return undefined;
  const second = await vscode.window.showQuickPick(
    items.filter((i) => i.run !== first.run),
    { title: vscode.l10n.t('Compare Runs of {0} (2/2): compare {1} with', ref.label, first.run.runId), matchOnDetail: true },
  );
  return second ? { refId: ref.id, a: first.run, b: second.run } : undefined;
}

export async function openTrace(ctx: Ctx, _f: Features, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (picked) await openReview(picked.ref, picked.traceId);
}

export async function copyTraceId(ctx: Ctx, _f: Features, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (picked) await vscode.env.clipboard.writeText(picked.traceId);
}
