import * as vscode from 'vscode';
import { BUTTON } from './buttons';

/** One LogOutputChannel for the extension. Nothing secret is ever passed to it. */
export function createLog(): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel('Eval Runner', { log: true });
}

/** Eval Runner: Show Logs, from the palette or the view's menu: the same channel every error's Show Logs opens. */
export function showLogs(ctx: { readonly log: vscode.LogOutputChannel }): void {
  ctx.log.show(true);
}

/** Shows what failed and what to do, with "Show Logs" and any further actions; resolves to the action chosen. */
export async function showError(
  log: vscode.LogOutputChannel,
  message: string,
  ...actions: string[]
): Promise<string | undefined> {
  log.error(message);
  const choice = await vscode.window.showErrorMessage(message, ...actions, BUTTON.showLogs);
  if (choice === BUTTON.showLogs) log.show(true);
  return choice;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
