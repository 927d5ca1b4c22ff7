// The one module that speaks to the service: createApiClient puts together the transport (transport.ts), the
// declared routes (routes.ts) and the meaning of answers and failures (errorMapping.ts).
import { ApiError, NotReadyError } from './errors';
import type { ApiErrorInit } from './errors';
import { errorInit, isNotReadySignal, isWaitable } from './errorMapping';
import type { EvaluationKind, RequestEncoding } from './evaluationKinds';
import { proxyFromEnv } from './proxy';
import type { ProxyConfig } from './proxy';
import { DEFAULT_RETRY_POLICY, sleep } from './retry';
import type { RetryPolicy } from './retry';
import { ListStream } from './listStream';
import type { PromptSink, StreamedList } from './listStream';
import { listRoute, readSubmitResult, submitRoute } from './routes';
import type { SubmitResult } from './routes';
import type { PromptItem } from './schemas';
import { MIB, Transport, parseBaseUrl } from './transport';

export { MIB, parseBaseUrl } from './transport';
export type { SubmitResult } from './routes';
export type { PromptSink, StreamedList } from './listStream';

/** The default guard against a runaway prompt list (--max-list-mb, evalRunner.maxListMegabytes). */
export const DEFAULT_MAX_LIST_MEGABYTES = 4096;
/** One prompt item's largest size (its traceId and content as sent): past it, the service is not sending prompts. */
export const MAX_PROMPT_ITEM_BYTES = 16 * MIB;
// A batch handed to the sink: at most this many items, or this much text.
const BATCH_ITEMS = 1000;
const BATCH_CHARS = 4 * MIB;

export interface ApiClientOptions {
  /** The service's base URL; paths such as /api/evaluation/promptsAll are appended to it. */
  baseUrl: string;
  /** The personal access token, sent only to the base URL's origin. */
  token: string;
  encoding?: RequestEncoding;
  /** Deadline of one attempt, response body included. */
  requestTimeoutMs?: number;
  /** Open connections per origin at most (keep-alive). */
  connections?: number;
  retry?: Partial<RetryPolicy>;
  /** The guard against a runaway prompt list, in bytes (default DEFAULT_MAX_LIST_MEGABYTES MiB). */
  maxListBytes?: number;
  maxSubmitResponseBytes?: number;
  onRetry?: (event: RetryEvent) => void;
  userAgent?: string;
  /** The proxy to use; undefined: the environment's (HTTPS_PROXY, HTTP_PROXY, NO_PROXY); null: none. */
  proxy?: ProxyConfig | null;
  /** Told what is worth a debug-level log line and no more (a service that answers in its own conventions). */
  onDebug?: (message: string) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface WaitOptions extends CallOptions {
  /** Give up after this long; 0 tries once. */
  timeoutMs: number;
  /** Longest pause between two polls. */
  maxPollIntervalMs?: number;
  onWait?: (event: WaitEvent) => void;
}

export interface RetryEvent {
  operation: string;
  attempt: number;
  delayMs: number;
  error: ApiError;
}

export interface WaitEvent {
  /** Polls made so far. */
  attempt: number;
  delayMs: number;
  elapsedMs: number;
  /** Why the prompts are not there yet, in the user's words. */
  reason: string;
}

export interface ApiClient {
  readonly baseUrl: string;
  readonly origin: string;
  readonly encoding: RequestEncoding;
  /** The whole list in memory (streamPrompts collected): for the lists a check or a small command needs. */
  listPrompts(kind: EvaluationKind, evaluationId: number, options?: CallOptions): Promise<PromptItem[]>;
  /** Lists the prompts, waiting (polling with backoff) while robustness prompts are still being generated. */
  waitForPrompts(kind: EvaluationKind, evaluationId: number, options: WaitOptions): Promise<PromptItem[]>;
  /**
   * Reads the list as it streams in, handing its items to `sink` in batches (the body paused while the sink's
   * promise is pending); never holds the list whole. Resolves once the envelope is read and says success. On a
   * rejection the sink may have had some items (a list malformed further on, a failure said after the data):
   * whatever it kept of them is not a list. NotReadyError comes only before any item.
   */
  streamPrompts(kind: EvaluationKind, evaluationId: number, sink: PromptSink, options?: CallOptions): Promise<StreamedList>;
  /** streamPrompts, waiting (polling with backoff) while robustness prompts are still being generated. */
  waitForPromptStream(kind: EvaluationKind, evaluationId: number, sink: PromptSink, options: WaitOptions): Promise<StreamedList>;
  submitAnswer(
    kind: EvaluationKind,
    evaluationId: number,
    traceId: string,
    answer: string,
    options?: CallOptions,
  ): Promise<SubmitResult>;
  close(): Promise<void>;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = parseBaseUrl(options.baseUrl);
  const token = options.token;
  if (!token || /[\0-\x1f\x7f\s]/.test(token)) {
    // The token itself is never echoed: this message only describes it.
    throw new TypeError('The personal access token is empty or contains spaces or control characters.');
  }
  const encoding = options.encoding ?? 'urlencoded';
  const maxListBytes = options.maxListBytes ?? DEFAULT_MAX_LIST_MEGABYTES * MIB;
  const maxSubmitBytes = options.maxSubmitResponseBytes ?? MIB;
  const transport = new Transport({
    base,
    token,
    encoding,
    timeoutMs: options.requestTimeoutMs ?? 60_000,
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    connections: options.connections ?? 64,
    userAgent: options.userAgent ?? 'eval-runner',
    proxy: options.proxy === undefined ? proxyFromEnv() : options.proxy ?? undefined,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });

  const lists = promptLists(transport, token, maxListBytes);

  return {
    baseUrl: transport.baseUrl,
    origin: base.origin,
    encoding,
    ...lists,
    async submitAnswer(kind, evaluationId, traceId, answer, call = {}) {
      const envelope = await transport.call(submitRoute(kind, evaluationId, traceId, answer, maxSubmitBytes), call.signal);
      return readSubmitResult(envelope, traceId, token, options.onDebug);
    },
    close: () => transport.close(),
  };
}

/** The prompt list's four ways: streamed or whole, at once or waiting for generation. */
function promptLists(
  transport: Transport,
  token: string,
  maxListBytes: number,
): Pick<ApiClient, 'listPrompts' | 'streamPrompts' | 'waitForPrompts' | 'waitForPromptStream'> {
  const streamPrompts = async (kind: EvaluationKind, evaluationId: number, sink: PromptSink, call: CallOptions & { attempts?: number } = {}): Promise<StreamedList> => {
    const spec = { ...listRoute(kind, evaluationId, maxListBytes), ...(call.attempts !== undefined ? { attempts: call.attempts } : {}), tooLarge: listTooLarge(maxListBytes) };
    const list = new ListStream({ operation: spec.operation, token, sink, maxItemBytes: MAX_PROMPT_ITEM_BYTES, batchItems: BATCH_ITEMS, batchChars: BATCH_CHARS });
    try {
      return await transport.stream(spec, call.signal, (status, headers) => list.open(status, headers), () => true);
    } catch (error) {
      if (kind === 'robustness' && list.delivered === 0 && error instanceof ApiError && isNotReadySignal(error)) {
        throw new NotReadyError(
          'The adversarial prompts are not generated yet',
          'Wait for the service to finish generating them (the CLI waits with --wait-for-generation SECONDS).',
          errorInit(error, 'notReady'),
        );
      }
      throw error;
    }
  };
  const listPrompts = async (kind: EvaluationKind, evaluationId: number, call: CallOptions & { attempts?: number } = {}): Promise<PromptItem[]> => {
    const items: PromptItem[] = [];
    await streamPrompts(kind, evaluationId, (batch) => {
      for (const item of batch) items.push(item);
      return Promise.resolve();
    }, call);
    return items;
  };

  return {
    listPrompts: (kind, id, o) => listPrompts(kind, id, o),
    streamPrompts: (kind, id, sink, o) => streamPrompts(kind, id, sink, o),
    waitForPrompts: async (kind, id, wait) => {
      let items: PromptItem[] = [];
      await pollForPrompts(
        async (signal) => {
          items = await listPrompts(kind, id, { signal, attempts: 1 });
          return items.length;
        },
        kind,
        id,
        wait,
      );
      return items;
    },
    waitForPromptStream: (kind, id, sink, wait) => {
      let result: StreamedList = { count: 0, requestCode: undefined };
      let given = 0;
      const counted: PromptSink = (batch) => {
        given += batch.length;
        return sink(batch);
      };
      return pollForPrompts(
        async (signal) => {
          result = await streamPrompts(kind, id, counted, { signal, attempts: 1 });
          return result.count;
        },
        kind,
        id,
        wait,
        // Asking again would hand the sink its items a second time.
        () => given > 0,
      ).then(() => result);
    },
  };
}

/** The words of a prompt list over the guard: the flag and the setting that raise it. */
function listTooLarge(maxBytes: number): { summary: string; hint: string } {
  return {
    summary: `The service's prompt list was larger than ${Math.round(maxBytes / MIB)} MB`,
    hint: 'Check the base URL; if the evaluation really is this large, raise --max-list-mb (CLI) or evalRunner.maxListMegabytes (editor).',
  };
}

/**
 * Lists until there are prompts, polling with backoff while the adversarial prompts are still being generated.
 * `list` reads the list once and says how many items it had; a list that had some is never read again.
 */
async function pollForPrompts(
  list: (signal: AbortSignal | undefined) => Promise<number>,
  kind: EvaluationKind,
  evaluationId: number,
  wait: WaitOptions,
  gaveItems: () => boolean = () => false,
): Promise<void> {
  const started = Date.now();
  const maxInterval = wait.maxPollIntervalMs ?? 15_000;
  let lastReason = 'no answer yet';
  let lastError: ApiError | undefined;
  for (let poll = 1; ; poll++) {
    try {
      const count = await list(wait.signal);
      if (count > 0 || kind === 'benchmark') return;
      lastReason = 'the service listed no prompts yet';
      lastError = undefined;
    } catch (error) {
      if (!(error instanceof ApiError) || !isWaitable(error) || gaveItems()) throw error;
      lastError = error;
      lastReason = error instanceof NotReadyError ? 'generation is not finished' : error.message;
    }
    const elapsed = Date.now() - started;
    const remaining = wait.timeoutMs - elapsed;
    if (remaining <= 0) {
      const init: ApiErrorInit = lastError
        ? errorInit(lastError, 'notReady')
        : { reason: 'notReady', operation: `listing the ${kind} prompts of evaluation ${evaluationId}` };
      throw new NotReadyError(
        `The adversarial prompts were not ready within ${Math.round(wait.timeoutMs / 1000)} s (${lastReason})`,
        'Try again later, or wait longer (--wait-for-generation SECONDS).',
        init,
      );
    }
    // Polls back off from 0.5 s to maxInterval; half-jitter keeps many waiting clients apart.
    const backoff = Math.min(maxInterval, 500 * 2 ** Math.min(poll - 1, 10));
    const jittered = backoff * (0.5 + Math.random() / 2);
    const delayMs = Math.max(0, Math.min(remaining, lastError?.retryAfterMs ?? jittered));
    wait.onWait?.({ attempt: poll, delayMs, elapsedMs: elapsed, reason: lastReason });
    await sleep(delayMs, wait.signal);
  }
}
