// The vscode-lm target in a runner: the VS Code Language Model API exists only in a window, so each call goes to an
// attached window over the protocol (lmSend), which answers with the same target the editor has (lmTarget.ts). While
// no window is attached, calls wait for one; a window that goes away in the middle of a call (a reload) hands the
// call to the next one.
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { abortReason, truncate } from '../api/errors';
import { TargetError } from '../core';
import type { Target, TargetCallOptions } from '../core';
import { LM_ERROR_CODE, lmSend } from '../protocol/runnerProtocol';
import type { LmSendError, LmSendResult } from '../protocol/runnerProtocol';

// An answer or a message from a window is checked as anything from a target is (the window is another process).
const MAX_ANSWER_CHARS = 10_000_000;
const MAX_MESSAGE_CHARS = 2_000;
const KINDS: ReadonlySet<string> = new Set(['rateLimited', 'timeout', 'failed', 'refused']);

export class WindowLm {
  private waiting = 0;
  /** Since when calls wait for a window (undefined: none waits). */
  private waitingSince: number | undefined;
  private readonly wake = new Set<() => void>();

  /** `changed`: whether calls wait for a window changed (the run's progress says so). */
  constructor(
    private readonly windows: ReadonlySet<MessageConnection>,
    private readonly changed: () => void,
  ) {}

  /** Calls wait for a window to attach. */
  get waitingForWindow(): boolean {
    return this.waiting > 0;
  }

  /** A window attached: the calls waiting for one go to it. Returns how long they waited (ms; undefined: none did). */
  attached(): number | undefined {
    const waited = this.waitingSince === undefined ? undefined : Date.now() - this.waitingSince;
    for (const resume of [...this.wake]) resume();
    return waited;
  }

  target(modelId: string | undefined): Target {
    return {
      description: `vscode-lm ${modelId ?? '(any chat model)'}`,
      send: (prompt, call) => this.send(modelId, prompt, call),
    };
  }

  private async send(modelId: string | undefined, prompt: string, call: TargetCallOptions): Promise<string> {
    for (;;) {
      const window = await this.window(call.signal);
      const cts = new CancellationTokenSource();
      const onAbort = () => cts.cancel();
      call.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const asked = window.sendRequest(lmSend, { ...(modelId !== undefined ? { modelId } : {}), prompt, timeoutMs: call.timeoutMs }, cts.token);
        const result = checked(await untilAborted(asked, call.signal));
        if (result.usage) call.onUsage?.(result.usage);
        return result.text;
      } catch (error) {
        if (call.signal.aborted) throw abortReason(call.signal);
        if (error instanceof ResponseError && error.code === LM_ERROR_CODE) throw targetError(error.data as unknown);
        // The window went away while it asked the model (a reload, a closed window): the next window asks again.
        if (!this.windows.has(window)) continue;
        throw error instanceof TargetError ? error : new TargetError(`The window serving the chat model failed: ${truncate(error instanceof Error ? error.message : String(error), MAX_MESSAGE_CHARS)}`, 'failed');
      } finally {
        call.signal.removeEventListener('abort', onAbort);
        cts.dispose();
      }
    }
  }

  /** An attached window; while there is none, waits for one (until the call is cancelled). */
  private async window(signal: AbortSignal): Promise<MessageConnection> {
    for (;;) {
      const first = [...this.windows][0];
      if (first) return first;
      if (signal.aborted) throw abortReason(signal);
      if (++this.waiting === 1) {
        this.waitingSince = Date.now();
        this.changed();
      }
      let resume: () => void = () => undefined;
      try {
        await new Promise<void>((resolve) => {
          resume = resolve;
          this.wake.add(resume);
          signal.addEventListener('abort', resume, { once: true });
        });
      } finally {
        this.wake.delete(resume);
        signal.removeEventListener('abort', resume);
        if (--this.waiting === 0) {
          this.waitingSince = undefined;
          this.changed();
        }
      }
    }
  }
}

/** The promise's value, or the signal's abort first (the window is told to cancel; the call does not wait for it). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function checked(result: LmSendResult): LmSendResult {
  if (typeof result?.text !== 'string') throw new TargetError('The window serving the chat model answered without a text.', 'failed');
  if (result.text.length > MAX_ANSWER_CHARS) throw new TargetError(`The chat model's answer is over ${MAX_ANSWER_CHARS} characters.`, 'failed', { retryable: false });
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined);
  const usage = result.usage && { promptTokens: count(result.usage.promptTokens), completionTokens: count(result.usage.completionTokens) };
  return { text: result.text, ...(usage && (usage.promptTokens !== undefined || usage.completionTokens !== undefined) ? { usage } : {}) };
}

/** The window's target error as the same TargetError: a refused access stops the run, Blocked is a quota. */
function targetError(data: unknown): TargetError {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Partial<Record<keyof LmSendError, unknown>>;
  const kind = typeof d.kind === 'string' && KINDS.has(d.kind) ? (d.kind as LmSendError['kind']) : 'failed';
  const message = typeof d.message === 'string' ? truncate(d.message, MAX_MESSAGE_CHARS) : 'The chat model failed.';
  const flag = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
  const retryAfterMs = typeof d.retryAfterMs === 'number' && Number.isFinite(d.retryAfterMs) && d.retryAfterMs >= 0 ? d.retryAfterMs : undefined;
  const details = { retryable: flag(d.retryable), stopsRun: flag(d.stopsRun), quota: flag(d.quota), retryAfterMs };
  return new TargetError(message, kind, Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined)));
}
