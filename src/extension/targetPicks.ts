// Select Target: which kind of target answers, then that kind's questions; what the user answers goes to the
// settings (evalRunner.target), and secrets (a model key, a secret header's value) to secret storage only.
import * as vscode from 'vscode';
import { ALL_KINDS, curlReader } from '../core';
import type { CurlRequest, PromptField } from '../core';
import type { Ctx } from './ctx';
import { pickPythonTarget, pickWorkerTarget } from './ownCode';
import { writeTarget } from './settings';
import type { TargetSettings } from './settingsModel';

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
  curl: askCurl,
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

/**
 * HTTP request from curl: the pasted command's credentials go to secret storage (as the HTTP endpoint's secret
 * headers), its other headers to settings; then the body's field for the prompt and the answer's path.
 */
async function askCurl(ctx: Ctx): Promise<TargetSettings | undefined> {
  const { readCurl, CurlError } = curlReader();
  const text = await askCurlCommand();
  if (!text) return undefined;
  const values = await askVariables(readCurl(text));
  if (!values) return undefined;
  let request: CurlRequest;
  try {
    request = readCurl(text, { variable: (name) => values.get(name)! });
  } catch (error) {
    if (!(error instanceof CurlError)) throw error;
    void vscode.window.showErrorMessage(vscode.l10n.t('The curl command cannot be read: {0}', error.message));
    return undefined;
  }
  const bodyTemplate = await askPromptField(request);
  if (!bodyTemplate) return undefined;
  const answerPath = await ask(vscode.l10n.t('HTTP request from curl: the answer'), vscode.l10n.t('Where the answer is in the JSON response (a dotted path or JSONPath)'), answerPathGuess(request.url));
  if (!answerPath) return undefined;
  const origin = new URL(request.url).origin;
  for (const [name, value] of Object.entries(request.secretHeaders)) await ctx.tokens.setHeader(origin, name, value);
  const secretHeaders = Object.keys(request.secretHeaders);
  return {
    type: 'http',
    url: request.url,
    ...(request.method !== 'POST' ? { method: request.method } : {}),
    ...(Object.keys(request.headers).length > 0 ? { headers: request.headers } : {}),
    ...(secretHeaders.length > 0 ? { secretHeaders } : {}),
    bodyTemplate,
    answerPath: answerPath.trim(),
  };
}

/** The command, pasted; the clipboard's when it holds one. Checked as it is typed: the reader's words say what is wrong. */
async function askCurlCommand(): Promise<string | undefined> {
  const { readCurl, CurlError } = curlReader();
  const clipboard = await vscode.env.clipboard.readText();
  return vscode.window.showInputBox({
    title: vscode.l10n.t('HTTP request from curl'),
    prompt: vscode.l10n.t("Paste a curl command (DevTools' Copy as cURL, bash or cmd; Postman; API docs). Write {{prompt}} where the prompt goes, or choose a field next."),
    value: /^\s*(\$\s+)?curl(\.exe)?\s/.test(clipboard) ? clipboard : '',
    ignoreFocusOut: true,
    validateInput: (v) => {
      if (!v.trim()) return vscode.l10n.t('Required.');
      try {
        const found = readCurl(v).variables.find((x) => x.in !== 'header');
        return found ? vscode.l10n.t('{0} is in the URL or the body: here variables are read in headers only. Write its value in the command.', found.name) : undefined;
      } catch (error) {
        return error instanceof CurlError ? error.message : String(error);
      }
    },
  });
}

/** The value of each variable the headers use ($OPENAI_API_KEY), asked once; they go to secret storage with their header. */
async function askVariables(shape: CurlRequest): Promise<Map<string, string> | undefined> {
  const values = new Map<string, string>();
  const origin = new URL(shape.url).origin;
  for (const { name } of shape.variables) {
    if (values.has(name)) continue;
    const value = await vscode.window.showInputBox({
      title: vscode.l10n.t('HTTP request from curl: {0}', name),
      prompt: vscode.l10n.t('The value of {0}, used in a header (kept in secret storage, sent only to {1})', name, origin),
      value: process.env[name] ?? '',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Required.')),
    });
    if (!value) return undefined;
    values.set(name, value.trim());
  }
  return values;
}

/** Where a field's name says it may hold the prompt: offered first, the last one (the latest message) on top. */
const LIKELY_PROMPT = /(^|\.)(content|prompt|input|inputs|text|query|question|message)$/;

/** The body as a template: as pasted when it holds {{prompt}}, else with the string field the user picks. */
async function askPromptField(request: CurlRequest): Promise<string | undefined> {
  if (request.bodyTemplate) return request.bodyTemplate;
  if (request.promptFields.length === 0) {
    const why = request.body === undefined ? vscode.l10n.t('The request sends no body.') : vscode.l10n.t('Its body has no {{prompt}} and no JSON string field.');
    void vscode.window.showErrorMessage(vscode.l10n.t('{0} Add a JSON body with {{prompt}} where the prompt goes (-d \'{"prompt": "{{prompt}}"}\') and paste the command again.', why));
    return undefined;
  }
  const likely = request.promptFields.filter((f) => LIKELY_PROMPT.test(f.dotted)).reverse();
  const fields: PromptField[] = [...likely, ...request.promptFields.filter((f) => !likely.includes(f))];
  const pick = await vscode.window.showQuickPick(
    fields.map((f) => ({ label: f.path, description: f.value.length > 60 ? `${f.value.slice(0, 60)}…` : f.value, field: f })),
    { title: vscode.l10n.t('Which field of the body holds the prompt?'), ignoreFocusOut: true },
  );
  return pick ? curlReader().withPromptAt(request, pick.field.path) : undefined;
}

/** The answer's place in the replies of the APIs people paste most: OpenAI's chat completions, Anthropic's messages. */
function answerPathGuess(url: string): string {
  const path = new URL(url).pathname;
  if (/\/chat\/completions\/?$/.test(path)) return 'choices.0.message.content';
  if (/\/v1\/messages\/?$/.test(path)) return 'content.0.text';
  return '';
}
