import * as vscode from 'vscode';
import { AuthError } from '../../api/errors';
import type { ApiClient } from '../../api/client';
import { MAX_NOTE_LENGTH } from '../../core';
import type { EvaluationSession, RunInfo, Verdict } from '../../core';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import { errorText, showError } from '../log';
import { isNode, pickEvaluation, pickTrace } from '../pick';
import type { EvaluationRef } from '../evaluations/registry';
import { closeReview, neighbourTrace, openReview } from './review';
import { nodeId, respondedUnder } from '../evaluations/treeModel';
import { withClient } from '../withClient';

/** The trace a verdict command acts on, with its session: undefined (and said why) when it has no answer yet. */
async function pickAnswered(ctx: Ctx, arg: unknown, traceArg: unknown) {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (!picked) return undefined;
  const session = ctx.registry.session(picked.ref);
  const trace = session.store.get(picked.traceId);
  if (!trace?.hasAnswer) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Trace {0} has no answer to judge yet.', picked.traceId));
    return undefined;
  }
  return { session, trace };
}

/** Marks the trace's answer good or bad; marking it again with the same verdict clears it. */
export async function markVerdict(ctx: Ctx, rating: Verdict, arg: unknown, traceArg: unknown): Promise<void> {
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
  if (next === undefined || next === picked.traceId) return;
  await openReview(picked.ref, next, { preview: true });
  await closeReview(ctx, picked.ref, picked.traceId);
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

// ---- Approve and Submit on many answers at once (evalRunner.reviewBeforeSubmit keeps answers as Responded)

interface Approval {
  submitted: number;
  failures: Array<{ traceId: string; reason: string }>;
  cancelled: boolean;
}

/**
 * Approve and Submit: the Responded answers of a tree group or page, of a multi-selection of traces, or (from the
 * palette) of an evaluation go to the service as they are, after a confirmation naming how many, under a
 * cancellable progress, one at a time through the session's own submit; then a summary.
 */
export async function approveAndSubmit(ctx: Ctx, _f: Features, arg: unknown, selection: unknown): Promise<void> {
  const chosen = await respondedChoice(ctx, arg, selection);
  if (!chosen) return;
  const { ref, ids } = chosen;
  const session = ctx.registry.session(ref);
  if (ids.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('{0} has no Responded answers to approve.', ref.label));
    return;
  }
  if (session.isRunning) {
    void vscode.window.showInformationMessage(vscode.l10n.t('{0} is running: approve its answers when the run has ended.', ref.label));
    return;
  }
  const yes = { label: vscode.l10n.t('$(check-all) Approve and Submit {0} Answer(s)', ids.length) };
  const confirmed = await ctx.pickItem([yes, { label: vscode.l10n.t('Cancel') }], {
    title: vscode.l10n.t('Submit {0} Responded answer(s) of {1} to the service?', ids.length, ref.label),
    ignoreFocusOut: true,
  });
  if (confirmed !== yes) return;
  const failed = (reason: string) => vscode.l10n.t('Submitting the answers of {0} failed: {1}', ref.label, reason);
  const done = await withClient(ctx, ref, failed, (client) => submitEach(session, client, ids, ref.label));
  if (done) await reportApproval(ctx, ref, done, ids.length);
}

async function respondedChoice(ctx: Ctx, arg: unknown, selection: unknown): Promise<{ ref: EvaluationRef; ids: string[] } | undefined> {
  // From the tree: the node acted on, or the whole selection when the node is part of one.
  const selected = Array.isArray(selection) ? selection.filter(isNode) : [];
  const nodes = isNode(arg) ? (selected.some((n) => nodeId(n) === nodeId(arg)) ? selected : [arg]) : [];
  if (nodes.length > 0) return { ref: nodes[0]!.ref, ids: respondedUnder(nodes, ctx.registry.session(nodes[0]!.ref)) };
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return undefined;
  const session = ctx.registry.session(ref);
  await session.load();
  return { ref, ids: respondedUnder([{ kind: 'evaluation', ref }], session) };
}

function submitEach(session: EvaluationSession, client: ApiClient, ids: readonly string[], label: string): Thenable<Approval> {
  const title = vscode.l10n.t('Submitting the approved answers of {0}', label);
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, cancel) => {
    const out: Approval = { submitted: 0, failures: [], cancelled: false };
    for (const [i, traceId] of ids.entries()) {
      if (cancel.isCancellationRequested) {
        out.cancelled = true;
        break;
      }
      // Another window or a CLI run may have submitted it meanwhile: only what is still Responded goes.
      if (session.store.get(traceId)?.state === 'answered') {
        try {
          await session.submitAnswer(client, traceId);
          out.submitted++;
        } catch (error) {
          // A rejected token stops it all: withClient says so and offers Set Token; what went is journaled.
          if (error instanceof AuthError) throw error;
          out.failures.push({ traceId, reason: errorText(error) });
        }
      }
      progress.report({ increment: 100 / ids.length, message: vscode.l10n.t('{0} of {1}', i + 1, ids.length) });
    }
    return out;
  });
}

async function reportApproval(ctx: Ctx, ref: EvaluationRef, done: Approval, total: number): Promise<void> {
  const line = vscode.l10n.t('{0}: {1} of {2} answer(s) submitted', ref.label, done.submitted, total);
  const first = done.failures[0];
  if (first) await showError(ctx.log, vscode.l10n.t('{0}, {1} failed ({2}: {3}); the rest stay Responded.', line, done.failures.length, first.traceId, first.reason));
  else void vscode.window.showInformationMessage(done.cancelled ? vscode.l10n.t('{0}, then cancelled; the rest stay Responded.', line) : `${line}.`);
}
