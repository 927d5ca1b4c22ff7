import * as vscode from 'vscode';
import { BUTTON } from '../buttons';
import type { Ctx } from '../ctx';
import type { EvaluationRef } from '../evaluations/registry';

/**
 * A run whose token the service rejected pauses until a new token is stored for the service's origin (Set Token in
 * this notification, the palette or another window): the new token, once one other than the rejected one is stored
 * (undefined: the user stopped the run, or it was cancelled).
 */
export async function waitForNewToken(ctx: Ctx, ref: EvaluationRef, signal?: AbortSignal): Promise<string | undefined> {
  const rejected = await ctx.tokens.get(ref.origin);
  ctx.log.warn(`${ref.label}: the service rejected the token; the run is paused until a new token is set.`);
  return new Promise<string | undefined>((resolve) => {
    const changed = ctx.tokens.onDidChangeToken(ref.origin, () => {
      void ctx.tokens.get(ref.origin).then((token) => {
        if (token !== undefined && token !== rejected) done(token);
      });
    });
    const onAbort = () => done(undefined);
    const done = (token: string | undefined) => {
      changed.dispose();
      signal?.removeEventListener('abort', onAbort);
      resolve(token);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    void askForToken(ref).then((choice) => {
      if (choice === 'stop') done(undefined);
    });
  });
}

/** The notification: Set Token runs the command (which stores the token, and so ends the pause); Stop Run ends the run. */
async function askForToken(ref: EvaluationRef): Promise<'stop' | undefined> {
  const stop = vscode.l10n.t('Stop Run');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('{0}: the service rejected the token. The run is paused: its answers are journaled and wait. Set a new token to go on.', ref.label),
    BUTTON.setToken,
    stop,
  );
  if (choice === BUTTON.setToken) await vscode.commands.executeCommand('evalRunner.setToken', ref.id);
  return choice === stop ? 'stop' : undefined;
}
