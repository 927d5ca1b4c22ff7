import * as vscode from 'vscode';
import { rerunTraces } from './ownCode';
import { selectTarget } from './targetPicks';
import { withClient } from './withClient';
import { BUTTON } from './buttons';
import { isEvaluationId } from '../api/kinds';
import { configSecrets, LOCAL_STATES, runCommandLine, STATE_LABELS } from '../core';
import { askToken } from './ctx';
import type { Ctx } from './ctx';
import type { Features } from './features';
import { errorText, showError } from './log';
import { editNote, markVerdict, pickTwoRuns, stepTrace } from './reviewCommands';
import { openReview, parseReviewUri } from './review';
import { pickEvaluation, pickOrigin, pickTrace } from './pick';
import { writeEvaluations } from './settings';
import { processDetailsUrl, runConfigFor } from './settingsModel';


type Handler = (ctx: Ctx, f: Features, ...args: unknown[]) => unknown;

/** Every command, keyed by the id package.json declares (a test checks the two sets are equal). */
export const COMMANDS = {
  'evalRunner.addEvaluation': addEvaluation,
  'evalRunner.removeEvaluation': removeEvaluation,
  'evalRunner.fetchPrompts': fetchPrompts,
  'evalRunner.runEvaluation': async (ctx, f, arg) => {
    const ref = await pickEvaluation(ctx, arg);
    if (ref) await f.runs.run(ref);
  },
  'evalRunner.runTrace': async (ctx, f, arg, traceArg) => {
    const picked = await pickTrace(ctx, arg, traceArg, ['pending', 'failed', 'answered']);
    if (picked) await f.runs.run(picked.ref, { only: new Set([picked.traceId]) });
  },
  'evalRunner.submitResponse': submitResponse,
  'evalRunner.retryFailed': async (ctx, f, arg) => {
    const ref = await pickEvaluation(ctx, arg);
    if (!ref) return;
    const failed = [...ctx.registry.session(ref).store.traces.values()].filter((t) => t.state === 'failed').map((t) => t.traceId);
    if (failed.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('{0} has no failed traces.', ref.label));
      return;
    }
    await f.runs.run(ref, { only: new Set(failed) });
  },
  'evalRunner.skipTrace': async (ctx, _f, arg, traceArg) => {
    const picked = await pickTrace(ctx, arg, traceArg, ['pending', 'answered', 'failed']);
    if (!picked) return;
    const reason = await vscode.window.showInputBox({
      title: vscode.l10n.t('Skip trace {0}', picked.traceId),
      prompt: vscode.l10n.t('Why is this trace skipped? (kept in the journal and the export)'),
      validateInput: (v) => (v.trim() ? undefined : 'A reason is required.'),
    });
    if (!reason) return;
    await ctx.registry.session(picked.ref).skip(picked.traceId, reason.trim());
  },
  'evalRunner.cancelRun': async (ctx, _f, arg) => {
    const running = ctx.registry.refs.filter((r) => ctx.registry.session(r).isRunning);
    const ref = arg === undefined && running.length === 1 ? running[0] : await pickEvaluation(ctx, arg, running);
    if (!ref) {
      if (running.length === 0) void vscode.window.showInformationMessage(vscode.l10n.t('No evaluation is running.'));
      return;
    }
    ctx.registry.session(ref).cancel();
  },
  'evalRunner.showProgress': async (ctx, f, arg) => {
    const running = ctx.registry.refs.filter((r) => ctx.registry.session(r).isRunning);
    const ref = arg === undefined && running.length === 1 ? running[0] : await pickEvaluation(ctx, arg);
    if (ref) f.panels.open(ref);
  },
  'evalRunner.openTrace': async (ctx, _f, arg, traceArg) => {
    const picked = await pickTrace(ctx, arg, traceArg);
    if (picked) await openReview(picked.ref, picked.traceId);
  },
  'evalRunner.exportResults': exportResults,
  'evalRunner.openProcessDetails': async (ctx, _f, arg) => {
    const ref = await pickEvaluation(ctx, arg);
    if (!ref) return;
    const page = processDetailsUrl(ctx.settings.processDetailsUrl, ref.baseUrl, ref.evaluationId, ref.kind);
    if ('problem' in page) {
      const choice = await vscode.window.showErrorMessage(page.problem, BUTTON.openSettings);
      if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'evalRunner.processDetailsUrl');
      return;
    }
    await vscode.env.openExternal(vscode.Uri.parse(page.url, true));
  },
  'evalRunner.setToken': async (ctx, _f, arg) => {
    const origin = await pickOrigin(ctx, arg);
    if (!origin) return;
    const token = await askToken(origin);
    if (!token) return;
    await ctx.tokens.set(origin, token);
    void vscode.window.showInformationMessage(vscode.l10n.t('Token for {0} saved in secret storage.', origin));
  },
  'evalRunner.clearToken': async (ctx, _f, arg) => {
    const origin = await pickOrigin(ctx, arg);
    if (!origin) return;
    await ctx.tokens.clear(origin);
    void vscode.window.showInformationMessage(vscode.l10n.t('Token for {0} cleared.', origin));
  },
  'evalRunner.selectTarget': selectTarget,
  'evalRunner.clearModelKey': clearModelKey,
  'evalRunner.startSandbox': async (ctx, f) => {
    const sandbox = await ctx.sandbox.start();
    await ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
    ctx.log.info(`Local sandbox on ${sandbox.baseUrl} (evaluations ${sandbox.evaluations.map((e) => `${e.evaluationId} ${e.kind}`).join(', ')}).`);
    await vscode.commands.executeCommand('evalRunner.evaluations.focus');
    void vscode.window
      .showInformationMessage(
        vscode.l10n.t('Local sandbox running on {0} with a benchmark and a robustness evaluation. Your settings are unchanged.', sandbox.baseUrl),
        BUTTON.runBoth,
      )
      .then((choice) => {
        if (choice === BUTTON.runBoth) for (const ref of ctx.registry.refs.filter((r) => r.source === 'sandbox')) void f.runs.run(ref);
      });
  },
  'evalRunner.stopSandbox': async (ctx) => {
    for (const ref of ctx.registry.refs.filter((r) => r.source === 'sandbox')) ctx.registry.session(ref).cancel(true);
    const origin = await ctx.sandbox.stop();
    if (origin) await ctx.tokens.clear(origin);
  },
  'evalRunner.filterTraces': async (_ctx, f) => {
    const picks = await vscode.window.showQuickPick(
      LOCAL_STATES.map((s) => ({ label: STATE_LABELS[s], state: s, picked: f.tree.visibleStates.has(s) })),
      { canPickMany: true, title: vscode.l10n.t('Show traces in these states') },
    );
    if (!picks) return;
    f.tree.visibleStates = new Set(picks.map((p) => p.state));
    f.tree.refreshSoon(0);
  },
  'evalRunner.copyTraceId': async (ctx, _f, arg, traceArg) => {
    const picked = await pickTrace(ctx, arg, traceArg);
    if (picked) await vscode.env.clipboard.writeText(picked.traceId);
  },
  'evalRunner.markGood': (ctx, _f, arg, traceArg) => markVerdict(ctx, 'good', arg, traceArg),
  'evalRunner.markBad': (ctx, _f, arg, traceArg) => markVerdict(ctx, 'bad', arg, traceArg),
  'evalRunner.editNote': (ctx, _f, arg, traceArg) => editNote(ctx, arg, traceArg),
  'evalRunner.nextTrace': (ctx, _f, arg, traceArg) => stepTrace(ctx, 1, arg, traceArg),
  'evalRunner.previousTrace': (ctx, _f, arg, traceArg) => stepTrace(ctx, -1, arg, traceArg),
  'evalRunner.compareRuns': async (ctx, f, arg) => {
    const picked = await pickTwoRuns(ctx, arg);
    const ref = picked ? ctx.registry.find(picked.refId) : undefined;
    if (picked && ref) await f.compare.compare(ref, picked.a, picked.b);
  },
  'evalRunner.copyCliCommand': copyCliCommand,
  'evalRunner.rerunTraces': rerunTraces,
  'evalRunner.submitSkipped': submitSkipped,
  'evalRunner.refresh': async (ctx) => {
    await Promise.all(ctx.registry.refs.map((r) => ctx.registry.session(r).load()));
  },
} satisfies Record<string, Handler>;

export type CommandId = keyof typeof COMMANDS;

export function registerCommands(ctx: Ctx, features: Features): vscode.Disposable[] {
  return Object.entries(COMMANDS).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await (handler as Handler)(ctx, features, ...args);
      } catch (error) {
        await showError(ctx.log, vscode.l10n.t('{0} failed: {1}', id.replace('evalRunner.', ''), errorText(error)));
        return undefined;
      }
    }),
  );
}

// ---- the longer commands

async function addEvaluation(ctx: Ctx): Promise<void> {
  const idText = await vscode.window.showInputBox({
    title: vscode.l10n.t('Add Evaluation (1/3): evaluation id'),
    prompt: vscode.l10n.t('The numeric id of the evaluation in the service'),
    validateInput: (v) => (/^\d{1,15}$/.test(v.trim()) ? undefined : 'The evaluation id is a whole number.'),
  });
  if (!idText) return;
  const kindPick = await vscode.window.showQuickPick(
    [
      { label: 'Benchmark', description: 'prompts from promptsAll, answers as llmResponse', evaluationKind: 'benchmark' as const },
      { label: 'Robustness', description: 'adversarial prompts, answers as advResponse', evaluationKind: 'robustness' as const },
    ],
    { title: vscode.l10n.t('Add Evaluation (2/3): kind') },
  );
  if (!kindPick) return;
  const label = await vscode.window.showInputBox({ title: vscode.l10n.t('Add Evaluation (3/3): label (optional)'), prompt: vscode.l10n.t('Shown in the sidebar') });
  if (label === undefined) return;
  const evaluationId = Number(idText.trim());
  if (!isEvaluationId(evaluationId)) return;
  const current = ctx.settings.evaluations.filter((e) => !(e.evaluationId === evaluationId && e.kind === kindPick.evaluationKind));
  await writeEvaluations([...current, { evaluationId, kind: kindPick.evaluationKind, ...(label.trim() ? { label: label.trim() } : {}) }]);
  if (!ctx.settings.baseUrl) {
    const choice = await vscode.window.showWarningMessage(vscode.l10n.t('Evaluation added. Set the service base URL to use it.'), BUTTON.openSettings);
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'evalRunner.baseUrl');
  }
}

async function removeEvaluation(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg, ctx.registry.refs.filter((r) => r.source === 'configured'));
  if (!ref || ref.source !== 'configured') return;
  const ok = await vscode.window.showWarningMessage(
    vscode.l10n.t('Remove {0} from the sidebar? Its local journal is kept.', ref.label),
    { modal: true },
    BUTTON.remove,
  );
  if (ok !== BUTTON.remove) return;
  await writeEvaluations(ctx.settings.evaluations.filter((e) => !(e.evaluationId === ref.evaluationId && e.kind === ref.kind)));
}

async function fetchPrompts(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return;
  const failed = (reason: string) => vscode.l10n.t('Fetching the prompts of {0} failed: {1}', ref.label, reason);
  const count = await withClient(ctx, ref, failed, (client) =>
    vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Fetching the prompts of {0}', ref.label), cancellable: true },
      async (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        return ctx.registry.session(ref).fetchPrompts(client, {
          signal: controller.signal,
          waitForGenerationMs: ctx.settings.waitForGenerationSeconds * 1000,
          onWait: (reason) => progress.report({ message: `waiting: ${reason}` }),
        });
      },
    ),
  );
  if (count !== undefined) void vscode.window.showInformationMessage(vscode.l10n.t('{0}: {1} prompts fetched.', ref.label, count));
}

async function submitResponse(ctx: Ctx, _f: Features, arg: unknown, traceArg: unknown): Promise<void> {
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
  if (session.store.get(picked.traceId)?.answer === undefined) {
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

/** Submit as Not Answered: each skipped trace gets the fixed text with its reason, so the service can complete. */
async function submitSkipped(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
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

async function exportResults(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return;
  const format = await vscode.window.showQuickPick(
    [
      { label: 'JSONL', format: 'jsonl' as const, bom: false },
      { label: 'CSV', format: 'csv' as const, bom: false },
      { label: 'CSV (Excel)', description: 'with a UTF-8 byte order mark', format: 'csv' as const, bom: true },
    ],
    { title: vscode.l10n.t('Export {0}', ref.label) },
  );
  if (!format) return;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const name = `${ref.kind}-${ref.evaluationId}.${format.format}`;
  const uri = await vscode.window.showSaveDialog({
    ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, name) } : {}),
    filters: { [format.format.toUpperCase()]: [format.format] },
  });
  if (!uri) return;
  const session = ctx.registry.session(ref);
  const options = { bom: format.bom };
  // The core's export, straight to a local file (owner-only); through the workspace file system elsewhere.
  if (uri.scheme === 'file') await session.exportTo(format.format, uri.fsPath, options);
  else await vscode.workspace.fs.writeFile(uri, Buffer.from([...(await session.exportLines(format.format, options))].join(''), 'utf8'));
  void vscode.window.showInformationMessage(vscode.l10n.t('Exported {0} traces to {1}.', session.store.traces.size, uri.fsPath || uri.toString()));
}

async function clearModelKey(ctx: Ctx): Promise<void> {
  const t = ctx.settings.target;
  const current = t.type === 'openai' ? t.baseUrl : t.type === 'http' ? t.url : undefined;
  const origins = new Set(ctx.tokens.knownOrigins());
  try {
    if (current) origins.add(new URL(current).origin);
  } catch {
    // an invalid target URL has no key to clear
  }
  if (origins.size === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No model keys or secret headers are stored.'));
    return;
  }
  const origin = await vscode.window.showQuickPick([...origins], { title: vscode.l10n.t('Clear the model key and secret headers of which endpoint?') });
  if (!origin) return;
  await ctx.tokens.clearModelKey(origin);
  void vscode.window.showInformationMessage(vscode.l10n.t('Cleared the model key and secret headers of {0}; the next run there asks again.', origin));
}

/**
 * Copy as CLI Command: the `eval-runner run` line for this evaluation with the editor's target and settings,
 * so a run tried here moves to CI unchanged; a config file beside it when the target needs one (an HTTP
 * target's body template and headers). Never a secret: only the names of the variables that hold them.
 */
async function copyCliCommand(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return;
  const t = ctx.settings.target;
  const keyless = t.type === 'openai' && ctx.tokens.isKeyless(new URL(t.baseUrl).origin);
  const config = runConfigFor(ref, ctx.settings, keyless);
  if ('problem' in config) {
    const choice = await vscode.window.showWarningMessage(config.problem, BUTTON.selectTarget);
    if (choice) await vscode.commands.executeCommand('evalRunner.selectTarget');
    return;
  }
  let line = runCommandLine(config);
  if (config.target?.type === 'http') {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await ctx.askSaveUri({
      title: vscode.l10n.t("Save the run's config file (the HTTP target's template and headers go there)"),
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, 'eval-runner.config.json') } : {}),
      filters: { JSON: ['json'] },
    });
    if (!uri) return;
    await vscode.workspace.fs.writeFile(uri, Buffer.from(`${JSON.stringify(config, null, 2)}\n`, 'utf8'));
    const shown = folder && uri.path.startsWith(`${folder.path}/`) ? uri.path.slice(folder.path.length + 1) : uri.fsPath;
    line = runCommandLine(config, shown);
  }
  await vscode.env.clipboard.writeText(`# Needs ${configSecrets(config).join(', ')} in the environment (never on the command line).\n${line}\n`);
  void vscode.window.showInformationMessage(vscode.l10n.t('Copied the CLI command for {0}: set {1} in the environment where it runs.', ref.label, configSecrets(config).join(', ')));
}
