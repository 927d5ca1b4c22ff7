// Add Evaluation: every answer it needs (the service, its token, the evaluation), asked first, written last, so
// Escape at any step leaves nothing behind.
import * as vscode from 'vscode';
import { parseBaseUrl } from '../../api/client';
import { EVALUATION_KINDS, isEvaluationId } from '../../api/evaluationKinds';
import type { EvaluationKind } from '../../api/evaluationKinds';
import { SANDBOX_ORIGIN, listJournals } from '../../core';
import type { Ctx } from '../ctx';
import { writeBaseUrl, writeEvaluations } from '../settings/settings';
import { readEvaluations } from '../settings/settingsModel';
import type { ConfiguredEvaluation } from '../settings/settingsModel';

/** Add Evaluation's pick of a kind: one per evaluation kind (a new kind does not compile until it has one). */
const KIND_PICKS: Readonly<Record<EvaluationKind, { label: string; description: string }>> = {
  benchmark: { label: 'Benchmark', description: 'prompts from promptsAll, answers as llmResponse' },
  robustness: { label: 'Robustness', description: 'adversarial prompts, answers as advResponse' },
};

interface NewEvaluation {
  baseUrl: string;
  /** Entered here, for a service with none stored; undefined: one is stored already. */
  token: string | undefined;
  evaluationId: number;
  kind: EvaluationKind;
  label: string;
  where: 'user' | 'workspace';
}

export async function addEvaluation(ctx: Ctx): Promise<void> {
  const answers = await askAll(ctx);
  if (!answers) return;
  const origin = parseBaseUrl(answers.baseUrl).origin;
  if (answers.token) await ctx.tokens.set(origin, answers.token);
  if (answers.baseUrl !== ctx.settings.baseUrl) await writeBaseUrl(answers.baseUrl);
  const { evaluationId, kind, label } = answers;
  const current = listIn(answers.where).filter((e) => !(e.evaluationId === evaluationId && e.kind === kind));
  await writeEvaluations([...current, { evaluationId, kind, ...(label ? { label } : {}) }], answers.where);
  const place = answers.where === 'workspace' ? vscode.l10n.t('workspace settings') : vscode.l10n.t('user settings');
  void vscode.window.showInformationMessage(vscode.l10n.t('Added {0} evaluation {1} at {2} to your {3}.', kind, evaluationId, origin, place));
}

/** The questions in order; undefined as soon as one is escaped. */
async function askAll(ctx: Ctx): Promise<NewEvaluation | undefined> {
  const baseUrl = await askBaseUrl(ctx);
  if (!baseUrl || !(await confirmMove(ctx, baseUrl))) return undefined;
  const origin = parseBaseUrl(baseUrl).origin;
  const stored = await ctx.tokens.get(origin);
  const token = stored ? undefined : await askServiceToken(origin);
  if (!stored && !token) return undefined;
  const idText = await vscode.window.showInputBox({
    title: vscode.l10n.t('Add Evaluation: evaluation id'),
    prompt: vscode.l10n.t('The numeric id of the evaluation in the service'),
    ignoreFocusOut: true,
    validateInput: (v) => (/^\d{1,15}$/.test(v.trim()) ? undefined : vscode.l10n.t('The evaluation id is a whole number.')),
  });
  const evaluationId = Number(idText?.trim());
  if (!idText || !isEvaluationId(evaluationId)) return undefined;
  const kindPick = await vscode.window.showQuickPick(
    EVALUATION_KINDS.map((evaluationKind) => ({ ...KIND_PICKS[evaluationKind], evaluationKind })),
    { title: vscode.l10n.t('Add Evaluation: kind'), ignoreFocusOut: true },
  );
  if (!kindPick) return undefined;
  const label = await vscode.window.showInputBox({ title: vscode.l10n.t('Add Evaluation: label (optional)'), prompt: vscode.l10n.t('Shown in the sidebar'), ignoreFocusOut: true });
  if (label === undefined) return undefined;
  const where = await askWhere();
  return where ? { baseUrl, token, evaluationId, kind: kindPick.evaluationKind, label: label.trim(), where } : undefined;
}

/** The service: the base URLs already known first (the current one, then the state folder's), then any other. */
async function askBaseUrl(ctx: Ctx): Promise<string | undefined> {
  const enter = { label: vscode.l10n.t('Enter a URL…'), alwaysShow: true, url: '' };
  const known = await knownServices(ctx);
  const items = [
    ...known.map((k) => ({ label: k.url, description: k.current ? vscode.l10n.t('the base URL in your settings') : vscode.l10n.t('has runs in the state folder'), url: k.url })),
    enter,
  ];
  const picked = known.length === 0 ? enter : await ctx.pickItem(items, { title: vscode.l10n.t("Add Evaluation: the service's base URL"), ignoreFocusOut: true });
  if (!picked || picked.url) return picked?.url;
  const typed = await vscode.window.showInputBox({
    title: vscode.l10n.t("Add Evaluation: the service's base URL"),
    prompt: vscode.l10n.t('For example https://evals.example.com: the token is sent to its origin only.'),
    placeHolder: 'https://',
    ignoreFocusOut: true,
    validateInput: (v) => baseUrlProblem(v.trim()),
  });
  return typed?.trim().replace(/\/+$/, '') || undefined;
}

/** The current base URL, then the services the state folder has runs of (never the sandbox: it is its own). */
async function knownServices(ctx: Ctx): Promise<Array<{ url: string; current: boolean }>> {
  const current = ctx.settings.baseUrl && !baseUrlProblem(ctx.settings.baseUrl) ? [ctx.settings.baseUrl] : [];
  const journals = await listJournals(ctx.settings.stateDir).catch(() => []);
  const sandbox = ctx.sandbox.place ? new URL(ctx.sandbox.place.baseUrl).origin : undefined;
  const seen = journals.map((j) => j.origin).filter((o) => o !== SANDBOX_ORIGIN && o !== sandbox && /^https?:\/\//.test(o) && !baseUrlProblem(o));
  const others = [...new Set(seen)].filter((o) => !current.some((c) => parseBaseUrl(c).origin === o));
  return [...current.map((url) => ({ url, current: true })), ...others.map((url) => ({ url, current: false }))];
}

function baseUrlProblem(url: string): string | undefined {
  try {
    parseBaseUrl(url);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** There is one base URL: moving it moves the evaluations already there too, so that is asked first. */
async function confirmMove(ctx: Ctx, baseUrl: string): Promise<boolean> {
  const others = ctx.settings.evaluations.length;
  if (!ctx.settings.baseUrl || baseUrl === ctx.settings.baseUrl || others === 0) return true;
  const use = vscode.l10n.t('Use {0}', baseUrl);
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('The sidebar has one service: its {0} evaluation(s) at {1} will be looked for at {2} too.', others, ctx.settings.baseUrl, baseUrl),
    { modal: true },
    use,
  );
  return choice === use;
}

async function askServiceToken(origin: string): Promise<string | undefined> {
  const token = await vscode.window.showInputBox({
    title: vscode.l10n.t('Add Evaluation: token for {0}', origin),
    prompt: vscode.l10n.t("Personal access token for {0} (kept in VS Code's secret storage)", origin),
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (/\s/.test(v.trim()) ? vscode.l10n.t('A token has no spaces.') : v.trim() ? undefined : vscode.l10n.t('The token is required.')),
  });
  return token?.trim() || undefined;
}

/** User settings, unless the user picks the workspace's: asked only in a trusted workspace with a folder. */
async function askWhere(): Promise<'user' | 'workspace' | undefined> {
  if (!vscode.workspace.isTrusted || !vscode.workspace.workspaceFolders?.length) return 'user';
  const picked = await vscode.window.showQuickPick(
    [
      { label: vscode.l10n.t('User settings'), description: vscode.l10n.t('every window'), where: 'user' as const },
      {
        label: vscode.l10n.t('Workspace settings'),
        description: vscode.l10n.t('this folder only'),
        detail: vscode.l10n.t('The base URL stays in your user settings: a workspace value of it is ignored in an untrusted workspace.'),
        where: 'workspace' as const,
      },
    ],
    { title: vscode.l10n.t('Add Evaluation: save it in'), ignoreFocusOut: true },
  );
  return picked?.where;
}

/** The list in that scope alone: what is written there keeps what was there. */
function listIn(where: 'user' | 'workspace'): ConfiguredEvaluation[] {
  const inspected = vscode.workspace.getConfiguration('evalRunner').inspect<unknown>('evaluations');
  return readEvaluations(where === 'workspace' ? inspected?.workspaceValue : inspected?.globalValue);
}
