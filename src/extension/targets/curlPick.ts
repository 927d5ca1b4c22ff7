// Select Target's "HTTP request from curl…": the pasted command read by the core's reader, its secrets to secret
// storage, the rest to settings. A file of its own (dist/curlPick.js), loaded when the entry is picked.
import * as vscode from 'vscode';
import type { CurlRequest, PromptField, curlReader } from '../../core';
import type { Ctx } from '../ctx';
import { curlImport, curlVariableProblem, queryVariableNames } from './curlImport';
import type { CurlImport } from './curlImport';
import type { TargetSettings } from '../settings/settingsModel';

type Reader = ReturnType<typeof curlReader>;

function ask(title: string, prompt: string, value: string): Thenable<string | undefined> {
  return vscode.window.showInputBox({ title, prompt, value, ignoreFocusOut: true, validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Required.')) });
}

/**
 * HTTP request from curl: the pasted command's credentials (every header but a few plain ones, and the query
 * parameters that use a variable or are named like a key) go to secret storage under the endpoint's origin, the rest
 * to settings; then the body's field for the prompt and the answer's path. The user sees where each value goes first.
 */
export async function askCurl(ctx: Ctx, reader: Reader): Promise<TargetSettings | undefined> {
  const { readCurl, CurlError } = reader;
  const text = await askCurlCommand(reader);
  if (!text) return undefined;
  const shape = readCurl(text);
  const values = await askVariables(shape);
  if (!values) return undefined;
  let request: CurlRequest;
  try {
    request = readCurl(text, { variable: (name) => values.get(name)! });
  } catch (error) {
    if (!(error instanceof CurlError)) throw error;
    void vscode.window.showErrorMessage(vscode.l10n.t('The curl command cannot be read: {0}', error.message));
    return undefined;
  }
  const bodyTemplate = await askPromptField(reader, request);
  if (!bodyTemplate) return undefined;
  const answerPath = await ask(vscode.l10n.t('HTTP request from curl: the answer'), vscode.l10n.t('Where the answer is in the JSON response (a dotted path or JSONPath)'), answerPathGuess(request.url));
  if (!answerPath) return undefined;
  const plan = curlImport(reader, request, bodyTemplate, answerPath.trim(), queryVariableNames(shape));
  if (!(await confirmDestinations(plan))) return undefined;
  for (const s of plan.secrets) await (s.in === 'query' ? ctx.tokens.setQuery(plan.origin, s.name, s.value) : ctx.tokens.setHeader(plan.origin, s.name, s.value));
  return plan.target;
}

/** Where each value goes, said before anything is saved (a literal key moved out of the URL named apart). */
async function confirmDestinations(plan: CurlImport): Promise<boolean> {
  if (plan.secrets.length === 0) return true;
  const moved = plan.movedQuery.length > 0 ? vscode.l10n.t('{0} was written in the URL: its value is moved to secret storage, not to settings.', plan.movedQuery.join(', ')) : '';
  const save = vscode.l10n.t('Save');
  const choice = await vscode.window.showInformationMessage(
    vscode.l10n.t('Where the values of this request go'),
    { modal: true, detail: [...plan.destinations, vscode.l10n.t('Everything else (URL, method, body, answer path) → your user settings.'), moved].filter(Boolean).join('\n') },
    save,
  );
  return choice === save;
}

/** The command, pasted; the clipboard's when it holds one. Checked as it is typed: the reader's words say what is wrong. */
async function askCurlCommand({ readCurl, CurlError }: Reader): Promise<string | undefined> {
  const clipboard = await vscode.env.clipboard.readText();
  return vscode.window.showInputBox({
    title: vscode.l10n.t('HTTP request from curl'),
    prompt: vscode.l10n.t("Paste a curl command (DevTools' Copy as cURL, bash or cmd; Postman; API docs). Write {{prompt}} where the prompt goes, or choose a field next."),
    value: /^\s*(\$\s+)?curl(\.exe)?\s/.test(clipboard) ? clipboard : '',
    ignoreFocusOut: true,
    validateInput: (v) => {
      if (!v.trim()) return vscode.l10n.t('Required.');
      try {
        const found = curlVariableProblem(readCurl(v).variables);
        if (!found) return undefined;
        // Never "write the value in the command": the address and the body are saved in settings, the body journaled.
        return found.in === 'body'
          ? vscode.l10n.t('{0} is in the body, which is saved in settings and journaled: send it in a header or the URL\'s query instead, where its value is kept in secret storage.', found.name)
          : vscode.l10n.t("{0} is in the URL's address, which is saved in settings: send it in a header or the URL's query instead, where its value is kept in secret storage.", found.name);
      } catch (error) {
        return error instanceof CurlError ? error.message : String(error);
      }
    },
  });
}

/**
 * The value of each variable ($OPENAI_API_KEY) the headers and the query use, asked once in a masked box. Never
 * pre-filled from the editor's environment: a command pasted from a web page could name any variable there.
 */
async function askVariables(shape: CurlRequest): Promise<Map<string, string> | undefined> {
  const values = new Map<string, string>();
  const origin = new URL(shape.url).origin;
  for (const { name, in: where } of shape.variables) {
    if (values.has(name)) continue;
    const value = await vscode.window.showInputBox({
      title: vscode.l10n.t('HTTP request from curl: {0}', name),
      prompt:
        where === 'query'
          ? vscode.l10n.t("The value of {0}, used in the URL's query (kept in secret storage, sent only to {1})", name, origin)
          : vscode.l10n.t('The value of {0}, used in a header (kept in secret storage, sent only to {1})', name, origin),
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
async function askPromptField(reader: Reader, request: CurlRequest): Promise<string | undefined> {
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
  return pick ? reader.withPromptAt(request, pick.field.path) : undefined;
}

/** The answer's place in the replies of the APIs people paste most: OpenAI's chat completions, Anthropic's messages. */
function answerPathGuess(url: string): string {
  const path = new URL(url).pathname;
  if (/\/chat\/completions\/?$/.test(path)) return 'choices.0.message.content';
  if (/\/v1\/messages\/?$/.test(path)) return 'content.0.text';
  return '';
}
