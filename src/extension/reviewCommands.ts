import * as vscode from 'vscode';
import { MAX_NOTE_LENGTH } from '../core/session';
import type { RunInfo } from '../core/traceStore';
import type { Ctx } from './ctx';
import { pickEvaluation, pickTrace } from './pick';
import { neighbourTrace, openReview } from './review';

/** Marks the trace's answer good or bad; marking it again with the same verdict clears it. */
export async function markVerdict(ctx: Ctx, rating: 'good' | 'bad', arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (!picked) return;
  const session = ctx.registry.session(picked.ref);
  const trace = session.store.get(picked.traceId);
  if (trace?.answer === undefined) {
    void vscode.window.showInformationMessage(`Trace ${picked.traceId} has no answer to judge yet.`);
    return;
  }
  await session.setVerdict(picked.traceId, trace.rating === rating ? undefined : rating, trace.note);
}

export async function editNote(ctx: Ctx, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (!picked) return;
  const session = ctx.registry.session(picked.ref);
  const trace = session.store.get(picked.traceId);
  if (trace?.answer === undefined) {
    void vscode.window.showInformationMessage(`Trace ${picked.traceId} has no answer to note yet.`);
    return;
  }
  const note = await vscode.window.showInputBox({
    title: `Note on the answer to ${picked.traceId}`,
    prompt: 'Kept in the local journal and exports, never sent to the service. Empty clears it.',
    value: trace.note ?? '',
    validateInput: (v) => (v.length > MAX_NOTE_LENGTH ? `At most ${MAX_NOTE_LENGTH} characters.` : undefined),
  });
  if (note === undefined) return;
  await session.setVerdict(picked.traceId, trace.rating, note);
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
      `${ref.label} has ${runs.length === 0 ? 'no runs' : 'one run'} so far. Run it with another target (Select Target, then Run → Start Fresh) to compare.`,
    );
    return undefined;
  }
  const items = runs.map((r) => ({
    label: r.target,
    description: `${new Date(r.startedAt).toLocaleString()} · ${r.answered} answered`,
    detail: `run ${r.runId}`,
    run: r,
  }));
  const first = await vscode.window.showQuickPick(items, { title: `Compare Runs of ${ref.label} (1/2): the first run`, matchOnDetail: true });
  if (!first) return undefined;
  const second = await vscode.window.showQuickPick(
    items.filter((i) => i.run !== first.run),
    { title: `Compare Runs of ${ref.label} (2/2): compare ${first.run.runId} with`, matchOnDetail: true },
  );
  return second ? { refId: ref.id, a: first.run, b: second.run } : undefined;
}
