import * as vscode from 'vscode';
import { abortReason } from '../../api/errors';
import { TargetError } from '../../core';
import type { Target, TargetCallOptions } from '../../core';
import type { LmSendError, LmSendParams, LmSendResult } from '../../protocol/runnerProtocol';

/** A VS Code chat model (vscode.lm) as a target; consent and quota errors become target errors. */
export function createLmTarget(modelId: string | undefined): Target {
  // The model is chosen once per run, not once per prompt; a failed look-up is retried on the next prompt.
  let chosen: Promise<vscode.LanguageModelChat | undefined> | undefined;
  const choose = () => {
    chosen ??= Promise.resolve(vscode.lm.selectChatModels(modelId ? { id: modelId } : {})).then((models) => {
      if (!models[0]) chosen = undefined;
      return models[0];
    });
    return chosen;
  };
  return {
    description: `vscode-lm ${modelId ?? '(any chat model)'}`,
    async send(prompt, call) {
      const model = await choose();
      if (!model) {
        throw new TargetError('No VS Code chat model is available: install or sign in to a chat model provider, then Select Target.', 'failed', {
          retryable: false,
        });
      }
      // The caller's cancel and the deadline end the call at once, whatever the provider does with the
      // cancellation it is told about (an abort that came while the model was being chosen included).
      const cts = new vscode.CancellationTokenSource();
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const stopped = new Promise<never>((_, reject) => {
        onAbort = () => {
          cts.cancel();
          reject(abortReason(call.signal));
        };
        if (call.signal.aborted) onAbort();
        else call.signal.addEventListener('abort', onAbort, { once: true });
        timer = setTimeout(() => {
          cts.cancel();
          reject(new TargetError(`${model.name} did not answer within ${Math.round(call.timeoutMs / 1000)} s`, 'timeout'));
        }, call.timeoutMs);
      });
      stopped.catch(() => undefined);
      const answer = async () => {
        const response = await model.sendRequest(
          [vscode.LanguageModelChatMessage.User(prompt)],
          { justification: 'Eval Runner sends each prompt of the evaluation you run to the chat model you chose.' },
          cts.token,
        );
        let text = '';
        for await (const part of response.text) text += part;
        await reportTokens(model, prompt, text, call, cts.token);
        return text;
      };
      try {
        return await Promise.race([answer(), stopped]);
      } catch (error) {
        if (call.signal.aborted || error instanceof TargetError) throw error;
        if (error instanceof vscode.LanguageModelError) {
          if (error.code === vscode.LanguageModelError.NoPermissions().code) {
            // Every later prompt would be refused the same way: the run stops instead of failing each trace.
            throw new TargetError(`Permission to use ${model.name} was not given: ${error.message}. Allow Eval Runner to use it (the chat model's consent prompt, or Manage Language Model Access), then run again.`, 'failed', {
              retryable: false,
              stopsRun: true,
            });
          }
          if (error.code === vscode.LanguageModelError.Blocked().code) {
            throw new TargetError(`${model.name} is blocked (quota or rate limit): ${error.message}`, 'rateLimited', { quota: true });
          }
          if (error.code === vscode.LanguageModelError.NotFound().code) {
            throw new TargetError(`The chat model ${modelId ?? ''} was not found: ${error.message}`, 'failed', { retryable: false });
          }
        }
        throw new TargetError(`${model.name} failed: ${error instanceof Error ? error.message : String(error)}`, 'failed');
      } finally {
        clearTimeout(timer);
        if (onAbort) call.signal.removeEventListener('abort', onAbort);
        cts.dispose();
      }
    },
  };
}

/** The chat model's own count of the prompt's and answer's tokens, where its provider can count (best effort). */
async function reportTokens(
  model: vscode.LanguageModelChat,
  prompt: string,
  answer: string,
  call: TargetCallOptions,
  token: vscode.CancellationToken,
): Promise<void> {
  if (!call.onUsage) return;
  try {
    const [promptTokens, completionTokens] = await Promise.all([model.countTokens(prompt, token), model.countTokens(answer, token)]);
    call.onUsage({ promptTokens, completionTokens });
  } catch {
    // A provider that cannot count leaves the run's token figures absent, never wrong.
  }
}

/**
 * This window's answers to a runner's chat-model calls (a vscode-lm run goes on in its runner process; only a window
 * has the Language Model API): the same target as above, one per model so that a model is chosen once per run. A
 * target error comes back as its kind and flags, for the runner to fail, retry or stop the run as here.
 */
export function lmServer(): (params: LmSendParams, signal: AbortSignal) => Promise<LmSendResult | { error: LmSendError }> {
  const targets = new Map<string, Target>();
  return async ({ modelId, prompt, timeoutMs }, signal) => {
    let target = targets.get(modelId ?? '');
    if (!target) targets.set(modelId ?? '', (target = createLmTarget(modelId)));
    let usage: LmSendResult['usage'];
    try {
      const text = await target.send(prompt, { signal, timeoutMs, onUsage: (u) => (usage = u) });
      return { text, ...(usage ? { usage } : {}) };
    } catch (error) {
      if (!(error instanceof TargetError) || signal.aborted) throw error;
      const { retryable, retryAfterMs, stopsRun, quota } = error.details;
      const flags = { retryable, retryAfterMs, stopsRun, quota };
      return { error: { kind: error.kind, message: error.message, ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) } };
    }
  };
}
