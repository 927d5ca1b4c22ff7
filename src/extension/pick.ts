import * as vscode from 'vscode';
import { BUTTON } from './buttons';
import { STATE_LABELS } from '../core';
import type { LocalTraceState } from '../core';
import type { Ctx } from './ctx';
import type { EvaluationRef } from './evaluations/registry';
import { parseReviewUri } from './review/review';
import type { TreeNode } from './evaluations/treeModel';
import { preview } from './evaluations/treeModel';

// ---- argument resolution: from the tree (a node), a webview or notification (an id), an editor (a Uri), or nothing (ask)

export async function pickEvaluation(ctx: Ctx, arg: unknown, among?: readonly EvaluationRef[]): Promise<EvaluationRef | undefined> {
  if (isNode(arg)) return arg.ref;
  // A keybinding in the sidebar ({ selected: true }): the selected evaluation, or the one a selected trace is of.
  if (typeof arg === 'object' && arg !== null && (arg as { selected?: unknown }).selected === true) {
    const node = ctx.treeSelection().find(isNode);
    if (node) return node.ref;
    arg = undefined;
  }
  if (typeof arg === 'string') return ctx.registry.find(arg);
  if (arg instanceof vscode.Uri) return parseReviewUri(ctx, arg)?.ref;
  const refs = among ?? ctx.registry.refs;
  if (refs.length === 0) {
    const choice = await vscode.window.showInformationMessage(vscode.l10n.t('No evaluations yet.'), BUTTON.addEvaluation, BUTTON.trySandbox);
    if (choice === BUTTON.addEvaluation) await vscode.commands.executeCommand('evalRunner.addEvaluation');
    if (choice === BUTTON.trySandbox) await vscode.commands.executeCommand('evalRunner.startSandbox');
    return undefined;
  }
  if (refs.length === 1) return refs[0];
  const pick = await vscode.window.showQuickPick(
    refs.map((ref) => ({ label: ref.label, description: `${ref.kind} · ${ref.origin}`, ref })),
    { title: vscode.l10n.t('Which evaluation?'), matchOnDescription: true },
  );
  return pick?.ref;
}

export async function pickTrace(
  ctx: Ctx,
  arg: unknown,
  traceArg: unknown,
  states?: readonly LocalTraceState[],
): Promise<{ ref: EvaluationRef; traceId: string } | undefined> {
  if (isNode(arg) && arg.kind === 'trace') return { ref: arg.ref, traceId: arg.trace.traceId };
  if (arg instanceof vscode.Uri) {
    const target = parseReviewUri(ctx, arg);
    return target ? { ref: target.ref, traceId: target.traceId } : undefined;
  }
  // A keybinding passes nothing: the review editor in front is the trace meant.
  const active = arg === undefined ? vscode.window.activeTextEditor?.document.uri : undefined;
  const fromEditor = active ? parseReviewUri(ctx, active) : undefined;
  if (fromEditor) return { ref: fromEditor.ref, traceId: fromEditor.traceId };
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return undefined;
  if (typeof traceArg === 'string') return { ref, traceId: traceArg };
  const session = ctx.registry.session(ref);
  const traces = [...session.store.traces.values()].filter((t) => !states || states.includes(t.state));
  if (traces.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('{0} has no such traces{1}.', ref.label, session.hasPrompts ? '' : ': fetch its prompts first'));
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    traces.slice(0, 5000).map((t) => ({ label: t.traceId, description: STATE_LABELS[t.state], detail: preview(t.prompt, 120), traceId: t.traceId })),
    { title: vscode.l10n.t('Which trace of {0}?', ref.label), matchOnDescription: true, matchOnDetail: true },
  );
  return pick ? { ref, traceId: pick.traceId } : undefined;
}

export async function pickOrigin(ctx: Ctx, arg: unknown): Promise<string | undefined> {
  const ref = isNode(arg) || typeof arg === 'string' ? await pickEvaluation(ctx, arg) : undefined;
  if (ref) return ref.origin;
  // The sandbox's token is its own: never offered here.
  const services = ctx.registry.refs.filter((r) => r.source !== 'sandbox');
  const origins = [...new Set([...services.map((r) => r.origin), safeOrigin(ctx.settings.baseUrl)])].filter(
    (o): o is string => !!o && o !== 'unset' && o !== 'invalid',
  );
  if (origins.length === 1) return origins[0];
  if (origins.length === 0) {
    const choice = await vscode.window.showErrorMessage(vscode.l10n.t('Set the service base URL (evalRunner.baseUrl) first.'), BUTTON.openSettings);
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'evalRunner.baseUrl');
    return undefined;
  }
  return vscode.window.showQuickPick(origins, { title: vscode.l10n.t('Token for which service?') });
}

function safeOrigin(url: string): string | undefined {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}

export function isNode(arg: unknown): arg is TreeNode {
  return typeof arg === 'object' && arg !== null && 'kind' in arg && 'ref' in arg;
}

