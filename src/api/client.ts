// The one module that speaks to the service: createApiClient puts together the transport (transport.ts), the
// declared routes (routes.ts) and the meaning of answers and failures (errorMapping.ts).
import { ApiError, NotReadyError } from './errors';
import type { ApiErrorInit } from './errors';
import { errorInit, isNotReadySignal, isWaitable } from './errorMapping';
import type { EvaluationKind, RequestEncoding } from './kinds';
import { proxyFromEnv } from './proxy';
import type { ProxyConfig } from './proxy';
import { DEFAULT_RETRY_POLICY, sleep } from './retry';
import type { RetryPolicy } from './retry';
import { listRoute, readPromptList, readSubmitResult, submitRoute } from './routes';
import type { SubmitResult } from './routes';
import type { PromptItem } from './schemas';
import { MIB, Transport, parseBaseUrl } from './transport';

export { parseBaseUrl } from './transport';
export type { SubmitResult } from './routes';

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
  listPrompts(kind: EvaluationKind, evaluationId: number, options?: CallOptions): Promise<PromptItem[]>;
  /** Lists the prompts, waiting (polling with backoff) while robustness prompts are still being generated. */
  waitForPrompts(kind: EvaluationKind, evaluationId: number, options: WaitOptions): Promise<PromptItem[]>;
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
  const maxListBytes = options.maxListBytes ?? 256 * MIB;
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

  const listPrompts = async (kind: EvaluationKind, evaluationId: number, call: CallOptions & { attempts?: number } = {}): Promise<PromptItem[]> => {
    const spec = { ...listRoute(kind, evaluationId, maxListBytes), ...(call.attempts !== undefined ? { attempts: call.attempts } : {}) };
    try {
      return readPromptList(await transport.call(spec, call.signal), spec.operation);
    } catch (error) {
      if (kind === 'robustness' && error instanceof ApiError && isNotReadySignal(error)) {
        throw new NotReadyError(
          'The adversarial prompts are not generated yet',
          'Wait for the service to finish generating them (the CLI waits with --wait-for-generation SECONDS).',
          errorInit(error, 'notReady'),
        );
      }
      throw error;
    }
  };

  return {
    baseUrl: transport.baseUrl,
    origin: base.origin,
    encoding,
    listPrompts: (kind, id, o) => listPrompts(kind, id, o),
    waitForPrompts: (kind, id, wait) => pollForPrompts((signal) => listPrompts(kind, id, { signal, attempts: 1 }), kind, id, wait),
    async submitAnswer(kind, evaluationId, traceId, answer, call = {}) {
      const envelope = await transport.call(submitRoute(kind, evaluationId, traceId, answer, maxSubmitBytes), call.signal);
      return readSubmitResult(envelope, traceId, token, options.onDebug);
    },
    close: () => transport.close(),
  };
}

/** Lists until there are prompts, polling with backoff while the adversarial prompts are still being generated. */
async function pollForPrompts(
  list: (signal: AbortSignal | undefined) => Promise<PromptItem[]>,
  kind: EvaluationKind,
  evaluationId: number,
  wait: WaitOptions,
): Promise<PromptItem[]> {
  const started = Date.now();
  const maxInterval = wait.maxPollIntervalMs ?? 15_000;
  let lastReason = 'no answer yet';
  let lastError: ApiError | undefined;
  for (let poll = 1; ; poll++) {
    try {
      const items = await list(wait.signal);
      if (items.length > 0 || kind === 'benchmark') return items;
      lastReason = 'the service listed no prompts yet';
      lastError = undefined;
    } catch (error) {
      if (!(error instanceof ApiError) || !isWaitable(error)) throw error;
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
