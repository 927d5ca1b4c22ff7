// Commands on access: the service token and model keys in secret storage, and the local sandbox.
import * as vscode from 'vscode';
import { BUTTON } from '../buttons';
import { askToken } from '../ctx';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import { isNode, pickOrigin } from '../pick';

export async function setToken(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const ref = isNode(arg) ? arg.ref : typeof arg === 'string' ? ctx.registry.find(arg) : undefined;
  if (ref?.source === 'sandbox') {
    void vscode.window.showInformationMessage(vscode.l10n.t('The local sandbox sets its own token: there is none to enter.'));
    return;
  }
  const origin = await pickOrigin(ctx, arg);
  if (!origin) return;
  const token = await askToken(origin);
  if (!token) return;
  await ctx.tokens.set(origin, token);
  void vscode.window.showInformationMessage(vscode.l10n.t('Token for {0} saved in secret storage.', origin));
}

export async function clearToken(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  const origin = await pickOrigin(ctx, arg);
  if (!origin) return;
  await ctx.tokens.clear(origin);
  void vscode.window.showInformationMessage(vscode.l10n.t('Token for {0} cleared.', origin));
}

export async function clearModelKey(ctx: Ctx): Promise<void> {
  const t = ctx.settings.target;
  const current = t.type === 'openai' ? t.baseUrl : t.type === 'http' ? t.url : undefined;
  const origins = new Set(ctx.tokens.knownOrigins());
  try {
    if (current) origins.add(new URL(current).origin);
  } catch {
    // an invalid target URL has no key to clear
  }
  if (origins.size === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No model keys, secret headers or secret query parameters are stored.'));
    return;
  }
  const origin = await vscode.window.showQuickPick([...origins], { title: vscode.l10n.t('Clear the model key, secret headers and query parameters of which endpoint?') });
  if (!origin) return;
  await ctx.tokens.clearModelKey(origin);
  void vscode.window.showInformationMessage(vscode.l10n.t('Cleared the model key, secret headers and query parameters of {0}; the next run there asks again.', origin));
}

export async function startSandbox(ctx: Ctx, f: Features): Promise<void> {
  const sandbox = await ctx.sandbox.start();
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
}

export async function stopSandbox(ctx: Ctx): Promise<void> {
  for (const ref of ctx.registry.refs.filter((r) => r.source === 'sandbox')) ctx.registry.session(ref).cancel(true);
  await ctx.sandbox.stop();
}
