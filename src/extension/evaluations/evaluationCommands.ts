// Commands on the evaluations themselves: add and remove them, fetch their prompts, show their progress, export
// them, open the service's page, copy the CLI line that runs one.
import * as vscode from 'vscode';
import { withClient } from '../withClient';
import { BUTTON } from '../buttons';
import { configSecrets, LOCAL_STATES, runCommandLine, STATE_LABELS, writeOwnerOnly } from '../../core';
import type { renderReport } from '../../core';
import type * as AddEvaluation from './addEvaluation';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import { pickEvaluation } from '../pick';
import { writeEvaluations } from '../settings/settings';
import { processDetailsUrl, runConfigFor } from '../settings/settingsModel';

/** Add Evaluation's questions: dist/addEvaluation.js, built apart (scripts/build.mjs) and loaded when asked, not at activation. */
export function addEvaluation(ctx: Ctx): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./addEvaluation.js') as typeof AddEvaluation).addEvaluation(ctx);
}

export async function removeEvaluation(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
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

export async function fetchPrompts(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
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

export async function exportResults(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
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

/**
 * Export Report: the self-contained HTML report (as `eval-runner report` writes it) of the evaluation's runs and
 * traces, for a reviewer. Its page (script and style) is a file of its own, dist/renderReport.js, loaded here only.
 */
export async function exportReport(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const uri = await ctx.askSaveUri({
    ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, `${ref.kind}-${ref.evaluationId}-report.html`) } : {}),
    filters: { HTML: ['html'] },
  });
  if (!uri) return;
  const session = ctx.registry.session(ref);
  const html = reportPage().renderReport(await session.reportData());
  if (uri.scheme === 'file') await writeOwnerOnly(uri.fsPath, html);
  else await vscode.workspace.fs.writeFile(uri, Buffer.from(html, 'utf8'));
  // Not awaited: the command is done once the file is written, whether or not the user opens it.
  void vscode.window
    .showInformationMessage(vscode.l10n.t('Wrote the report of {0} traces to {1}.', session.store.traces.size, uri.fsPath || uri.toString()), BUTTON.open)
    .then((choice) => (choice === BUTTON.open ? vscode.env.openExternal(uri) : undefined));
}

interface ReportPage {
  renderReport: typeof renderReport;
}

/** The report's writer with its page inlined: dist/renderReport.js, built apart (scripts/build.mjs) and loaded here only. */
function reportPage(): ReportPage {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./renderReport.js') as ReportPage;
}

export async function openProcessDetails(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = await pickEvaluation(ctx, arg);
  if (!ref) return;
  const page = processDetailsUrl(ctx.settings.processDetailsUrl, ref.baseUrl, ref.evaluationId, ref.kind);
  if ('problem' in page) {
    const choice = await vscode.window.showErrorMessage(page.problem, BUTTON.openSettings);
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'evalRunner.processDetailsUrl');
    return;
  }
  await vscode.env.openExternal(vscode.Uri.parse(page.url, true));
}

export async function copyCliCommand(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
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

export async function refresh(ctx: Ctx): Promise<void> {
  await Promise.all(ctx.registry.refs.map((r) => ctx.registry.session(r).load()));
}

export async function showProgress(ctx: Ctx, f: Features, arg: unknown): Promise<void> {
  const running = ctx.registry.refs.filter((r) => ctx.registry.session(r).isRunning);
  const ref = arg === undefined && running.length === 1 ? running[0] : await pickEvaluation(ctx, arg);
  if (ref) f.panels.open(ref);
}

export async function filterTraces(_ctx: Ctx, f: Features): Promise<void> {
  const picks = await vscode.window.showQuickPick(
    LOCAL_STATES.map((s) => ({ label: STATE_LABELS[s], state: s, picked: f.tree.visibleStates.has(s) })),
    { canPickMany: true, title: vscode.l10n.t('Show traces in these states') },
  );
  if (!picks) return;
  f.tree.visibleStates = new Set(picks.map((p) => p.state));
  f.tree.refreshAll();
}
