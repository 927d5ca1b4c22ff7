import type { ApiClient, PromptSink, StreamedList, WaitEvent } from '../../api/client';
import type { EvaluationKind } from '../../api/evaluationKinds';
import type { PromptItem } from '../../api/schemas';

export interface PromptListOptions {
  signal?: AbortSignal;
  /** How long a robustness list may wait for the adversarial prompts' generation (0: ask once). */
  waitForGenerationMs?: number;
  /** Told each time the wait goes on, and why. */
  onWait?: (event: WaitEvent) => void;
}

/**
 * The one way the core lists an evaluation's prompts: a benchmark's list at once; a robustness list once the
 * service has generated it, waiting (with backoff) up to waitForGenerationMs.
 */
export function listPromptsOf(client: ApiClient, kind: EvaluationKind, evaluationId: number, options: PromptListOptions = {}): Promise<PromptItem[]> {
  const signal = options.signal ? { signal: options.signal } : {};
  if (kind === 'benchmark') return client.listPrompts(kind, evaluationId, signal);
  return client.waitForPrompts(kind, evaluationId, { timeoutMs: options.waitForGenerationMs ?? 0, ...signal, ...(options.onWait ? { onWait: options.onWait } : {}) });
}

/**
 * The same list read as it streams in, its items handed to `sink` in batches (the list is never held whole): a
 * benchmark's at once; a robustness list once generated. If it rejects, the sink's items are not a list.
 */
export function streamPromptsOf(client: ApiClient, kind: EvaluationKind, evaluationId: number, sink: PromptSink, options: PromptListOptions = {}): Promise<StreamedList> {
  const signal = options.signal ? { signal: options.signal } : {};
  if (kind === 'benchmark') return client.streamPrompts(kind, evaluationId, sink, signal);
  return client.waitForPromptStream(kind, evaluationId, sink, { timeoutMs: options.waitForGenerationMs ?? 0, ...signal, ...(options.onWait ? { onWait: options.onWait } : {}) });
}
