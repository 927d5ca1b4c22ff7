// Debug Trace: one trace's prompt through the user's own code (a python or worker target) under the editor's
// debugger, stopping at their breakpoints; the answer opens in the review editor, to submit or to discard. What to
// launch and what came back is decided in the core (src/core/targets/python/debugLaunch.ts); this file starts and waits.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { DEBUG_ID_KEY, debugLaunch, debugShimPath, debuggable, readDebugAnswer, removeDebugFiles, writeDebugRequest } from '../../core';
import type { DebugOutcome } from '../../core';
import { BUTTON } from '../buttons';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import { Disposable } from '../lifecycle';
import { showError } from '../log';
import { pickTrace } from '../pick';
import { offerTrust, trustButton } from './restricted';
import type { EvaluationRef } from '../evaluations/registry';
import { openReview, reviewUri } from '../review/review';
import { onSettingsChanged } from '../settings/settings';

export const PYTHON_DEBUGGER = 'ms-python.debugpy';
const JS_DEBUGGER = 'ms-vscode.js-debug';

export async function debugTrace(ctx: Ctx, _f: Features, arg: unknown, traceArg: unknown): Promise<void> {
  const picked = await pickTrace(ctx, arg, traceArg);
  if (!picked) return;
  const { ref, traceId } = picked;
  const trace = ctx.registry.session(ref).store.get(traceId);
  if (trace?.prompt === undefined) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Trace {0} has no prompt here yet: fetch the prompts first.', traceId));
    return;
  }
  if (!(await debuggerReady(ctx))) return;
  const plan = await ctx.targetPlan();
  if (!plan || !debuggable(plan.spec)) return;
  const batch = plan.spec.type === 'python' && plan.spec.batchSize !== undefined;
  const files = writeDebugRequest({ prompt: trace.prompt, traceId, evaluationId: ref.evaluationId, kind: ref.kind }, batch);
  try {
    const id = randomUUID();
    const launch = debugLaunch({ spec: plan.spec, files, cwd: plan.options.cwd, traceId, id, envNames: Object.keys(process.env), shim: debugShimPath(plan.spec.type === 'python' ? 'python' : 'node') });
    ctx.log.info(`Debug Trace ${traceId}: ${launch.kind === 'python' ? 'the Python Debugger' : 'the JavaScript debugger'} runs ${plan.identity.description}.`);
    if (!(await underDebugger(launch.configuration, id, traceId))) return;
    await showOutcome(ctx, ref, traceId, readDebugAnswer(files));
  } finally {
    removeDebugFiles(files);
  }
}

/**
 * Whether the current target can run under a debugger here: a python or worker target (in an untrusted workspace,
 * only one the user's own settings name: readSettings ignores the workspace's), and its debugger installed.
 */
async function debuggerReady(ctx: Ctx): Promise<boolean> {
  const target = ctx.settings.target;
  if (!debuggable(target)) {
    const inWorkspace = vscode.workspace.getConfiguration('evalRunner').inspect<{ type?: string }>('target');
    const named = inWorkspace?.workspaceValue ?? inWorkspace?.workspaceFolderValue;
    const untrusted = !vscode.workspace.isTrusted && (named?.type === 'python' || named?.type === 'worker');
    const message = untrusted
      ? vscode.l10n.t("This workspace is not trusted: Debug Trace runs only a target your own user settings name, never the workspace's. Trust the workspace, or select the target yourself.")
      : vscode.l10n.t('Debug Trace runs your own code: a Python function or a worker target (the target now is {0}).', target.type);
    const choice = await vscode.window.showInformationMessage(message, BUTTON.selectTarget, ...(untrusted ? [trustButton()] : []));
    if (choice === BUTTON.selectTarget) await vscode.commands.executeCommand('evalRunner.selectTarget');
    else await offerTrust(choice);
    return false;
  }
  if (target.type === 'python' && !vscode.extensions.getExtension(PYTHON_DEBUGGER)) {
    const install = vscode.l10n.t('Install Python Debugger');
    const choice = await vscode.window.showInformationMessage(vscode.l10n.t('Debug Trace runs a Python function under the Python Debugger extension ({0}), which is not installed.', PYTHON_DEBUGGER), install);
    if (choice === install) await vscode.commands.executeCommand('workbench.extensions.installExtension', PYTHON_DEBUGGER);
    return false;
  }
  if (target.type === 'worker' && !vscode.extensions.getExtension(JS_DEBUGGER)) {
    await showError(ctx.log, vscode.l10n.t("Debug Trace runs a worker under VS Code's JavaScript debugger ({0}), which this editor does not have.", JS_DEBUGGER));
    return false;
  }
  return true;
}

/**
 * Starts the session and waits for its end, under a notification whose Cancel stops it (false: it did not start).
 * The session is the one whose launch configuration carries this id; the debugger's child sessions end before it.
 */
function underDebugger(configuration: Record<string, unknown>, id: string, traceId: string): Thenable<boolean> {
  const title = vscode.l10n.t('Debugging trace {0}: it stops at your breakpoints', traceId);
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (_progress, cancel) => {
    const ours = (s: vscode.DebugSession) => s.parentSession === undefined && s.configuration[DEBUG_ID_KEY] === id;
    let session: vscode.DebugSession | undefined;
    const listeners: vscode.Disposable[] = [];
    const ended = new Promise<void>((resolve) => {
      listeners.push(
        vscode.debug.onDidStartDebugSession((s) => {
          if (ours(s)) session = s;
        }),
        vscode.debug.onDidTerminateDebugSession((s) => {
          if (ours(s)) resolve();
        }),
        cancel.onCancellationRequested(() => void (session && vscode.debug.stopDebugging(session))),
      );
    });
    try {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!(await vscode.debug.startDebugging(folder, configuration as vscode.DebugConfiguration))) return false;
      await ended;
      return true;
    } finally {
      for (const l of listeners) l.dispose();
    }
  });
}

/** The answer in the trace's review editor, not yet saved: Submit sends it, Discard reverts to the journaled one. */
async function showOutcome(ctx: Ctx, ref: EvaluationRef, traceId: string, outcome: DebugOutcome | undefined): Promise<void> {
  if (!outcome) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Debug Trace {0}: the session ended before the code answered.', traceId));
    return;
  }
  if ('fatal' in outcome) {
    await showError(ctx.log, vscode.l10n.t('Debug Trace {0}: the code could not start: {1}', traceId, outcome.fatal));
    return;
  }
  if ('error' in outcome) {
    if (outcome.traceback) ctx.log.info(`Debug Trace ${traceId}: ${outcome.traceback}`);
    await showError(ctx.log, vscode.l10n.t('Debug Trace {0}: the code failed: {1}', traceId, outcome.error));
    return;
  }
  const trace = ctx.registry.session(ref).store.get(traceId);
  if (!trace || trace.state === 'submitted' || trace.state === 'running') {
    // Its answer cannot change now: the debugged answer is shown apart, for reading.
    const doc = await vscode.workspace.openTextDocument({ content: outcome.answer, language: 'plaintext' });
    await vscode.window.showTextDocument(doc, { preview: false });
    void vscode.window.showInformationMessage(vscode.l10n.t('Debug Trace {0}: the trace is {1}, so its answer stays; the debugged answer is shown apart.', traceId, trace?.state ?? 'gone'));
    return;
  }
  await openReview(ref, traceId);
  const doc = await vscode.workspace.openTextDocument(reviewUri(ref, traceId, 'answer'));
  const edit = new vscode.WorkspaceEdit();
  edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), outcome.answer);
  await vscode.workspace.applyEdit(edit);
  const submit = vscode.l10n.t('Submit');
  const discard = vscode.l10n.t('Discard');
  void vscode.window.showInformationMessage(vscode.l10n.t('Debug Trace {0}: its answer is in the review editor, not saved. Submit it, or discard it.', traceId), submit, discard).then(async (choice) => {
    if (choice === submit) await vscode.commands.executeCommand('evalRunner.submitResponse', doc.uri);
    if (choice === discard && doc.isDirty) {
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand('workbench.action.files.revert');
    }
  });
}

/** The context key evalRunner.targetDebuggable: Debug Trace is offered in menus only for a python or worker target. */
export class DebugTargetContext extends Disposable {
  constructor(private readonly ctx: Ctx) {
    super();
    this._register(onSettingsChanged(() => this.update()));
    this.update();
  }

  private update(): void {
    void vscode.commands.executeCommand('setContext', 'evalRunner.targetDebuggable', debuggable(this.ctx.settings.target));
  }
}
