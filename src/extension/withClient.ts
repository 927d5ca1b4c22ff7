import * as vscode from 'vscode';
import type { ApiClient } from '../api/client';
import { AuthError, isAbortError } from '../api/errors';
import { BUTTON } from './buttons';
import type { Ctx } from './ctx';
import { errorText, showError } from './log';
import type { EvaluationRef } from './evaluations/registry';

/**
 * Opens a client for the evaluation's service (asking for the token when none is stored), runs fn with it and
 * closes it. A failure is shown in the words `failed(reason)` gives, with Set Token when the service rejected the
 * token; a cancel shows nothing. Returns fn's result, or undefined when the user declined or fn failed.
 */
export async function withClient<T>(ctx: Ctx, ref: EvaluationRef, failed: (reason: string) => string, fn: (client: ApiClient) => PromiseLike<T>): Promise<T | undefined> {
  const client = await ctx.clientFor(ref);
  if (!client) return undefined;
  try {
    return await fn(client);
  } catch (error) {
    if (isAbortError(error)) return undefined;
    const isAuth = error instanceof AuthError;
    const choice = await showError(ctx.log, failed(errorText(error)), ...(isAuth ? [BUTTON.setToken] : []));
    if (choice === BUTTON.setToken) await vscode.commands.executeCommand('evalRunner.setToken', ref.id);
    return undefined;
  } finally {
    await client.close();
  }
}
