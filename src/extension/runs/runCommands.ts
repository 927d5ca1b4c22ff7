// Commands that run traces and submit answers: run, run one, cancel, skip, submit one answer or
// the skipped ones as not answered, compare two runs.
import * as vscode from 'vscode';
import { withClient } from '../withClient';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import { showError } from '../log';
import { pickTwoRuns } from '../review/reviewCommands';
import { parseReviewUri } from '../review/review';
import { pickEvaluation, pickTrace } from '../pick';

export async function runEvaluation(ctx: Ctx, f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (ref) await f.runs.run(ref);
}

export async function runTrace(ctx: Ctx, f: Features, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg, ['pending', 'failed', 'answered']);
  if (picked) await f.runs.run(picked.ref, { only: new Set([picked.traceId]) });
}

export async function cancelRun(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const running = ctx.registry.refs.filter((r) => ctx.registry.session(r).isRunning);
  const ref = arg === undefined && running.length === 1 ? running[0] : await pickEvaluation(ctx, arg, running);
  if (!ref) {
    if (running.length === 0) void vscode.window.showInformationMessage(vscode.l10n.t('No evaluation is running.'));
    return;
  }
  ctx.registry.session(ref).cancel();
}

export async function skipTrace(ctx: Ctx, _f: Features, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg, ['pending', 'answered', 'failed']);
  if (!picked) return;
  const reason = await vscode.window.showInputBox({
    title: vscode.l10n.t('Skip trace {0}', picked.traceId),
    prompt: vscode.l10n.t('Why is this trace skipped? (kept in the journal and the export)'),
    validateInput: (v) => (v.trim() ? undefined : 'A reason is required.'),
  });
  if (!reason) return;
  await ctx.registry.session(picked.ref).skip(picked.traceId, reason.trim());
}

export async function submitResponse(ctx: Ctx, _f: Features, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg, ['answered', 'failed', 'pending']);
  if (!picked) return;
  const session = ctx.registry.session(picked.ref);
  // An edited answer is saved first (the reviewer's text is journaled); an unedited one is submitted from the
  // journal, byte for byte: a text document normalises line endings, so its text is not the answer.
  const open = vscode.workspace.textDocuments.find((d) => {
    const t = parseReviewUri(ctx, d.uri);
    return t?.part === 'answer' && t.ref.id === picked.ref.id && t.traceId === picked.traceId;
  });
  if (open?.isDirty) await open.save();
  if (!session.store.get(picked.traceId)?.hasAnswer) {
    void vscode.window.showWarningMessage(vscode.l10n.t('Trace {0} has no answer yet: open it and write one, or run it.', picked.traceId));
    return;
  }
  const failed = (reason: string) => vscode.l10n.t('Submitting {0} failed: {1}', picked.traceId, reason);
  const done = await withClient(ctx, picked.ref, failed, async (client) => {
    await session.submitAnswer(client, picked.traceId);
    return true;
  });
  if (done) void vscode.window.showInformationMessage(vscode.l10n.t('Submitted the answer to {0}.', picked.traceId));
}

export async function submitSkipped(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return;
  const session = ctx.registry.session(ref);
  await session.load();
  if (session.store.counts.skipped === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('{0} has no skipped traces.', ref.label));
    return;
  }
  const failed = (reason: string) => vscode.l10n.t('Submitting the skipped traces of {0} failed: {1}', ref.label, reason);
  const done = await withClient(ctx, ref, failed, (client) => session.submitSkipped(client, ctx.settings.skippedAnswer));
  if (!done) return;
  if (done.failed.length) {
    await showError(ctx.log, vscode.l10n.t('{0}: {1} skipped trace(s) submitted as not answered, {2} failed: {3}', ref.label, done.submitted, done.failed.length, done.failed[0]!.reason));
  } else {
    void vscode.window.showInformationMessage(vscode.l10n.t('{0}: {1} skipped trace(s) submitted as not answered.', ref.label, done.submitted));
  }
}

export async function compareRuns(ctx: Ctx, f: Features, arg: unknown): Promise<void> {
  const picked = await pickTwoRuns(ctx, arg);
  const ref = picked ? ctx.registry.find(picked.refId) : undefined;
  if (picked && ref) await f.compare.compare(ref, picked.a, picked.b);
}
