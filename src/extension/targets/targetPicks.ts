// Select Target: which kind of target answers, then that kind's questions; what the user answers goes to the
// settings (evalRunner.target), and secrets (a model key, a secret header's value) to secret storage only.
import * as vscode from 'vscode';
import { ALL_KINDS, curlReader } from '../../core';
import type { Ctx } from '../ctx';
import type * as CurlPick from './curlPick';
import { pickPythonTarget, pickWorkerTarget } from './ownCodePick';
import { writeTarget } from '../settings/settings';
import type { TargetSettings } from '../settings/settingsModel';

/** Select Target's entries: each kind's, as its descriptor in the core names it (a kind may have two ways in). */
const KINDS = ALL_KINDS.flatMap((kind) => kind.picks.map((pick) => ({ label: pick.label, description: pick.description, type: pick.id })));

type Ask = (ctx: Ctx) => Thenable<TargetSettings | undefined>;

/** Each entry's questions, by the pick's id; undefined: the user cancelled (nothing is written). */
const ASK: Readonly<Record<string, Ask>> = {
  echo: () => Promise.resolve({ type: 'echo' }),
  manual: () => Promise.resolve({ type: 'manual' }),
  openai: askOpenAi,
  'openai-batch': async (ctx) => {
    const target = await askOpenAi(ctx);
    return target && { ...target, batch: true };
  },
  'vscode-lm': askChatModel,
  http: askHttp,
  curl: (ctx) => curlPick().askCurl(ctx, curlReader()),
  python: pickPythonTarget,
  worker: () => pickWorkerTarget(),
  command: async () => {
    const command = await ask('Shell command', 'Run per prompt: the prompt arrives on stdin, the answer is stdout');
    return command ? { type: 'command', command } : undefined;
  },
};

export async function selectTarget(ctx: Ctx): Promise<void> {
  const pick = await ctx.pickItem(KINDS, { title: vscode.l10n.t('Select Target') });
  if (!pick) return;
  const asker = ASK[pick.type];
  if (!asker) throw new Error(`Select Target has no questions for "${pick.type}".`);
  const target = await asker(ctx);
  if (!target) return;
  await writeTarget(target);
  void vscode.window.showInformationMessage(vscode.l10n.t('Target: {0}.', pick.label));
}

function ask(title: string, prompt: string, value = ''): Thenable<string | undefined> {
  return vscode.window.showInputBox({ title, prompt, value, ignoreFocusOut: true, validateInput: (v) => (v.trim() ? undefined : 'Required.') });
}

async function askOpenAi(ctx: Ctx): Promise<TargetSettings | undefined> {
  const baseUrl = await ask('OpenAI-compatible endpoint (1/3)', 'Base URL, e.g. https://api.openai.com/v1', 'https://api.openai.com/v1');
  if (!baseUrl) return undefined;
  const model = await ask('OpenAI-compatible endpoint (2/3)', 'Model name', 'gpt-4o-mini');
  if (!model) return undefined;
  const origin = originOf(baseUrl.trim());
  if (!origin) return undefined;
  const stored = await ctx.tokens.getModelKey(origin);
  const key = await vscode.window.showInputBox({
    title: vscode.l10n.t('OpenAI-compatible endpoint (3/3)'),
    prompt: stored
      ? `API key for ${origin} (one is stored; leave empty to keep it)`
      : `API key for ${origin} (kept in secret storage and sent only there; leave empty if it needs none)`,
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return undefined;
  if (key.trim()) await ctx.tokens.setModelKey(origin, key.trim());
  else if (!stored) await ctx.tokens.markKeyless(origin);
  return { type: 'openai', baseUrl: baseUrl.trim(), model: model.trim() };
}

async function askChatModel(): Promise<TargetSettings | undefined> {
  const models = await vscode.lm.selectChatModels();
  if (models.length === 0) {
    void vscode.window.showWarningMessage(vscode.l10n.t('No chat models are available in VS Code: install or sign in to a provider first.'));
    return undefined;
  }
  const m = await vscode.window.showQuickPick(
    models.map((model) => ({ label: model.name, description: `${model.vendor} · ${model.id}`, id: model.id })),
    { title: vscode.l10n.t('Which chat model?') },
  );
  return m ? { type: 'vscode-lm', model: m.id } : undefined;
}

async function askHttp(ctx: Ctx): Promise<TargetSettings | undefined> {
  const url = await ask('HTTP endpoint (1/3)', 'URL that receives the JSON body');
  if (!url) return undefined;
  const bodyTemplate = await ask('HTTP endpoint (2/3)', 'JSON body; {{prompt}} is replaced (JSON-escaped)', '{"prompt": "{{prompt}}"}');
  if (!bodyTemplate) return undefined;
  const answerPath = await ask('HTTP endpoint (3/3)', 'Where the answer is in the JSON response', 'choices.0.message.content');
  if (!answerPath) return undefined;
  const secretHeaders = await askSecretHeader(ctx, url.trim());
  if (!secretHeaders) return undefined;
  return { type: 'http', url: url.trim(), bodyTemplate, answerPath: answerPath.trim(), ...(secretHeaders.length ? { secretHeaders } : {}) };
}

/** The URL's origin, or undefined after telling the user it is not a URL. */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    void vscode.window.showErrorMessage(vscode.l10n.t('"{0}" is not a URL.', url));
    return undefined;
  }
}

/**
 * One header holding a secret (an API key header), if the endpoint takes one: its value goes to secret
 * storage under the endpoint's origin, its name into settings. undefined: cancelled.
 */
async function askSecretHeader(ctx: Ctx, url: string): Promise<string[] | undefined> {
  const origin = originOf(url);
  if (!origin) return undefined;
  const name = await vscode.window.showInputBox({
    title: vscode.l10n.t('HTTP endpoint: secret header'),
    prompt: vscode.l10n.t('Header that carries a key, e.g. Authorization or X-Api-Key (its value is kept in secret storage); leave empty for none'),
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() === '' || /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v.trim()) ? undefined : 'Not a header name.'),
  });
  if (name === undefined) return undefined;
  if (!name.trim()) return [];
  const value = await vscode.window.showInputBox({
    title: vscode.l10n.t('HTTP endpoint: {0}', name.trim()),
    prompt: vscode.l10n.t('Value of {0} (kept in secret storage, sent only to {1})', name.trim(), origin),
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'Required.'),
  });
  if (!value) return undefined;
  await ctx.tokens.setHeader(origin, name.trim(), value.trim());
  return [name.trim().toLowerCase()];
}

/** The curl import's questions: dist/curlPick.js, built apart (scripts/build.mjs) and loaded on first use, not at activation. */
function curlPick(): typeof CurlPick {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./curlPick.js') as typeof CurlPick;
}
