import { BodyTooLargeError, DeadlineError, createHttpAgent, httpRequest } from './http';
import { checkProxyConfig, failedAtProxy, proxyFailure, proxyFor, proxyFromEnv } from './proxy';
import type { ProxyConfig } from './proxy';
import type { HttpHeaders } from './http';
import { ApiError, AuthError, NotReadyError, isAbortError, redact, truncate } from './errors';
import type { ApiErrorInit } from './errors';
import { encodeForm } from './formBody';
import { KIND_ROUTES, isEvaluationId } from './kinds';
import type { EvaluationKind, RequestEncoding } from './kinds';
import { DEFAULT_RETRY_POLICY, abortReason, parseRetryAfter, retryDelay, sleep } from './retry';
import type { RetryPolicy } from './retry';
import { describeData, describeIssue, envelopeSchema, envelopeText, promptListSchema } from './schemas';
import type { Envelope, PromptItem } from './schemas';

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

export interface SubmitResult {
  message: string;
  /** The service's success text; empty when its `data` was not a string (the answer is recorded all the same). */
  data: string;
  requestCode: string | undefined;
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

type Method = 'GET' | 'POST';

interface RequestSpec {
  method: Method;
  path: string;
  query?: Record<string, string>;
  form?: ReadonlyArray<readonly [string, string]>;
  operation: string;
  maxBytes: number;
  attempts?: number;
}

interface RawResponse {
  status: number;
  headers: HttpHeaders;
  text: string;
}

const MIB = 1024 * 1024;
const MAX_REDIRECTS = 5;
// Codes meaning the request never got an answer because the connection itself failed.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const NOT_READY_STATUSES = new Set([409, 423, 425, 503]);

export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = parseBaseUrl(options.baseUrl);
  const token = options.token;
  if (!token || /[\0-\x1f\x7f\s]/.test(token)) {
    // The token itself is never echoed: this message only describes it.
    throw new TypeError('The personal access token is empty or contains spaces or control characters.');
  }
  const encoding = options.encoding ?? 'urlencoded';
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const maxListBytes = options.maxListBytes ?? 256 * MIB;
  const maxSubmitBytes = options.maxSubmitResponseBytes ?? MIB;
  const proxy = options.proxy === undefined ? proxyFromEnv() : options.proxy ?? undefined;
  checkProxyConfig(proxy);
  // The proxy this service is reached through (undefined: direct), named in connection errors.
  const via = proxyFor(proxy, base);
  const agent = createHttpAgent(
    {
      connections: options.connections ?? 64,
      keepAliveTimeout: 10_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    },
    proxy,
  );
  const headersBase: Record<string, string> = {
    authorization: `Bearer ${token}`,
    accept: 'application/json',
    'user-agent': options.userAgent ?? 'eval-runner',
  };
  const basePath = base.pathname.replace(/\/+$/, '');

  async function sendOnce(spec: RequestSpec, signal: AbortSignal | undefined): Promise<RawResponse> {
    // A copy of the base URL with its path and query set: never resolved against it, where a path
    // starting with // would name another host.
    let url = new URL(base.href);
    url.pathname = basePath + spec.path;
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    const form = spec.form ? encodeForm(spec.form, encoding) : undefined;
    for (let hop = 0; ; hop++) {
      const response = await attempt(url, spec, form, signal);
      if (response.status < 300 || response.status >= 400 || response.status === 304) return response;
      const location = firstHeader(response.headers.location);
      const init = { operation: spec.operation, status: response.status };
      if (!location) return response;
      const target = new URL(location, url);
      if (target.origin !== base.origin) {
        throw new ApiError(
          `The service redirected to another origin (${target.origin}); the token was not sent there`,
          'If that address really is the service, set it as the base URL.',
          { ...init, reason: 'redirect' },
        );
      }
      if (spec.method !== 'GET') {
        throw new ApiError(
          `The service redirected the submission to ${target.pathname}`,
          'Set the base URL to the address the service redirects to.',
          { ...init, reason: 'redirect' },
        );
      }
      if (hop + 1 >= MAX_REDIRECTS) {
        throw new ApiError(
          `The service redirected more than ${MAX_REDIRECTS} times`,
          'Check the base URL: the service seems to redirect in a loop.',
          { ...init, reason: 'redirect' },
        );
      }
      url = target;
    }
  }

  async function attempt(
    url: URL,
    spec: RequestSpec,
    form: ReturnType<typeof encodeForm> | undefined,
    callerSignal: AbortSignal | undefined,
  ): Promise<RawResponse> {
    if (callerSignal?.aborted) throw abortReason(callerSignal);
    // The last word before the token leaves: whatever built this URL, it goes to the base URL's origin or nowhere.
    if (url.origin !== base.origin) {
      throw new ApiError(
        `A request was about to go to ${url.origin} instead of the service at ${base.origin}; it was not sent`,
        'Check the base URL; report this if it is right.',
        { reason: 'redirect', operation: spec.operation },
      );
    }
    try {
      const headers: Record<string, string> = form ? { ...headersBase, 'content-type': form.contentType } : headersBase;
      const res = await httpRequest(agent, url, {
        method: spec.method,
        headers,
        ...(form ? { body: form.body } : {}),
        ...(callerSignal ? { signal: callerSignal } : {}),
        deadlineMs: timeoutMs,
        maxBytes: spec.maxBytes,
      });
      return { status: res.statusCode, headers: res.headers, text: res.body.toString('utf8') };
    } catch (error) {
      if (callerSignal?.aborted) throw abortReason(callerSignal);
      if (error instanceof BodyTooLargeError) {
        throw new ApiError(
          `The service's answer was larger than ${Math.round(spec.maxBytes / MIB)} MiB`,
          'Check the base URL; if the evaluation really is this large, raise the response size limit.',
          { reason: 'tooLarge', operation: spec.operation, status: error.statusCode },
        );
      }
      throw transportError(error, spec.operation, error instanceof DeadlineError, base.origin, via);
    }
  }

  async function call(spec: RequestSpec, signal: AbortSignal | undefined): Promise<Envelope> {
    const maxAttempts = spec.attempts ?? policy.maxAttempts;
    for (let attemptNo = 1; ; attemptNo++) {
      try {
        const raw = await sendOnce(spec, signal);
        return interpret(raw, spec.operation, token);
      } catch (error) {
        if (!(error instanceof ApiError) || attemptNo >= maxAttempts || !isRetryable(spec.method, error)) throw error;
        const delayMs = retryDelay(error.retryAfterMs, attemptNo, policy);
        if (delayMs === undefined) throw error;
        options.onRetry?.({ operation: spec.operation, attempt: attemptNo, delayMs, error });
        await sleep(delayMs, signal);
      }
    }
  }

  async function listPrompts(
    kind: EvaluationKind,
    evaluationId: number,
    callOptions: CallOptions & { attempts?: number } = {},
  ): Promise<PromptItem[]> {
    checkId(evaluationId);
    const route = KIND_ROUTES[kind];
    const operation = `listing the ${kind} prompts of evaluation ${evaluationId}`;
    let envelope: Envelope;
    try {
      envelope = await call(
        {
          method: 'GET',
          path: route.listPath,
          query: { evaluationId: String(evaluationId) },
          operation,
          maxBytes: maxListBytes,
          ...(callOptions.attempts !== undefined ? { attempts: callOptions.attempts } : {}),
        },
        callOptions.signal,
      );
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
    // The common case checked by hand (100k items: 3 ms instead of 20); zod, the schema of record, only
    // runs when an item looks wrong, to say which and why.
    const fast = plainPromptItems(envelope.data);
    if (fast) return fast;
    const parsed = promptListSchema.safeParse(envelope.data);
    if (!parsed.success) {
      throw new ApiError(
        `The service's prompt list is malformed (${describeIssue(parsed.error)})`,
        'The service may have changed its format; report this with the request code.',
        { reason: 'format', operation, requestCode: envelope.code },
      );
    }
    return parsed.data;
  }

  async function waitForPrompts(kind: EvaluationKind, evaluationId: number, wait: WaitOptions): Promise<PromptItem[]> {
    const started = Date.now();
    const maxInterval = wait.maxPollIntervalMs ?? 15_000;
    let lastReason = 'no answer yet';
    let lastError: ApiError | undefined;
    for (let poll = 1; ; poll++) {
      try {
        const items = await listPrompts(kind, evaluationId, { signal: wait.signal, attempts: 1 });
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

  async function submitAnswer(
    kind: EvaluationKind,
    evaluationId: number,
    traceId: string,
    answer: string,
    callOptions: CallOptions = {},
  ): Promise<SubmitResult> {
    checkId(evaluationId);
    const route = KIND_ROUTES[kind];
    const operation = `submitting the answer to trace "${traceId}" of ${kind} evaluation ${evaluationId}`;
    const envelope = await call(
      {
        method: 'POST',
        path: route.submitPath,
        form: [
          ['evaluationId', String(evaluationId)],
          ['traceId', traceId],
          [route.answerField, answer],
        ],
        operation,
        maxBytes: maxSubmitBytes,
      },
      callOptions.signal,
    );
    // success: true is the spec's promise that the answer is recorded (client rule 4); the text in `data` is a
    // courtesy. A service that sends null, an object or nothing there has still recorded the answer.
    if (typeof envelope.data !== 'string') {
      options.onDebug?.(`The service accepted trace "${truncate(traceId, 200)}" with data ${describeData(envelope.data)} instead of a success text; the answer is recorded.`);
    }
    const data = typeof envelope.data === 'string' ? truncate(redact(envelope.data, token), 2000) : '';
    return { message: envelope.message ?? '', data, requestCode: envelope.code };
  }

  return {
    baseUrl: base.origin + basePath,
    origin: base.origin,
    encoding,
    listPrompts: (kind, id, o) => listPrompts(kind, id, o),
    waitForPrompts,
    submitAnswer,
    close: () => agent.close(),
  };
}

function requestCodeOf(code: string | undefined, token: string): string | undefined {
  return code === undefined ? undefined : truncate(redact(code, token), 100);
}

/**
 * The base URL as the client uses it, or a TypeError saying what is wrong. Paths with // or a backslash are
 * refused: they are how a URL that looks like the service's names another host ("https://svc//evil",
 * "https://svc/\\evil"), and nothing legitimate needs them.
 */
export function parseBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`The base URL "${text}" is not a valid URL (expected e.g. https://evals.example.com).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`The base URL must start with http:// or https:// (got ${url.protocol}).`);
  }
  if (url.username || url.password) throw new TypeError('The base URL must not contain a user name or password.');
  const afterHost = text.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/\\?#]*/i, '');
  if (afterHost.includes('\\') || url.pathname.includes('//')) {
    throw new TypeError(`The base URL's path must not contain "//" or "\\" (got "${truncate(text, 200)}"): write it as e.g. https://evals.example.com/api-root.`);
  }
  url.search = '';
  url.hash = '';
  return url;
}

function checkId(evaluationId: number): void {
  if (!isEvaluationId(evaluationId)) {
    throw new RangeError(`The evaluation id must be a non-negative whole number (got ${String(evaluationId)}).`);
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isRetryable(method: Method, error: ApiError): boolean {
  if (error.reason === 'network') return method === 'GET' || error.connectionFailed;
  if (error.status === undefined) return method === 'GET' && error.reason === 'timeout';
  const s = error.status;
  if (method === 'GET') return s === 408 || s === 429 || (s >= 500 && s <= 599);
  return s === 429 || s === 502 || s === 503 || s === 504;
}

function isNotReadySignal(error: ApiError): boolean {
  if (error.reason === 'rejected' && error.status !== undefined && error.status >= 200 && error.status < 300) return true;
  return error.status !== undefined && NOT_READY_STATUSES.has(error.status);
}

/** While waiting for generation, passing trouble is waited out too; a wrong token or evaluation is not. */
function isWaitable(error: ApiError): boolean {
  if (error instanceof NotReadyError) return true;
  return error.reason === 'network' || error.reason === 'timeout' || error.reason === 'server' || error.reason === 'rateLimited';
}

function errorInit(error: ApiError, reason: ApiErrorInit['reason']): ApiErrorInit {
  return {
    reason,
    operation: error.operation,
    status: error.status,
    serviceMessage: error.serviceMessage,
    requestCode: error.requestCode,
    retryAfterMs: error.retryAfterMs,
  };
}

function transportError(error: unknown, operation: string, timedOut: boolean, origin: string, via?: string): ApiError {
  const code = transportCode(error);
  // Through a proxy, a failed connection is the proxy's to explain: say so, not "the service is down".
  if (via && !timedOut && failedAtProxy(error, code)) {
    const failure = proxyFailure(error, via);
    return new ApiError(
      `Could not reach the service at ${origin}: ${failure.message}${code ? ` [${code}]` : ''}`,
      'Check the proxy (HTTPS_PROXY / HTTP_PROXY, or VS Code\'s http.proxy) and whether this host belongs in NO_PROXY (http.noProxy).',
      { reason: 'network', operation, transportCode: code, connectionFailed: true },
    );
  }
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new ApiError(
      'The service did not answer in time',
      'The service may be overloaded or the network slow; try again, or raise the request time-out.',
      { reason: 'timeout', operation, transportCode: code },
    );
  }
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'HTTPParserError' || code === 'UND_ERR_HEADERS_OVERFLOW') {
    const detail = name === 'HTTPParserError' ? ((error as Error).message.match(/\(([^)]+)\)$/)?.[1] ?? 'unparsable') : 'headers too large';
    return new ApiError(
      `The service's reply is not valid HTTP (${detail})`,
      'Check that the base URL points at the service API over http(s), not at another kind of server or a broken proxy.',
      { reason: 'format', operation, transportCode: code ?? name },
    );
  }
  const connectionFailed = code !== undefined && CONNECTION_CODES.has(code);
  if (code === 'UND_ERR_SOCKET' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code === 'ECONNRESET') {
    return new ApiError(
      `The service at ${origin} closed the connection before its answer was complete [${code}]`,
      'The service or a proxy may be restarting or overloaded; try again shortly.',
      { reason: 'network', operation, transportCode: code, connectionFailed },
    );
  }
  return new ApiError(
    `Could not reach the service at ${origin}${code ? ` [${code}]` : ''}`,
    'Check the base URL and your network connection, then try again.',
    { reason: 'network', operation, transportCode: code, connectionFailed },
  );
}

function transportCode(error: unknown): string | undefined {
  if (isAbortError(error)) return 'ABORTED';
  const e = error as { code?: unknown; cause?: { code?: unknown }; errors?: Array<{ code?: unknown }> } | undefined;
  const code = e?.code ?? e?.cause?.code ?? e?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

function interpret(raw: RawResponse, operation: string, token: string): Envelope {
  let parsed: unknown;
  let parseFailure: string | undefined;
  const trimmed = raw.text.trim();
  if (trimmed === '') parseFailure = 'an empty body';
  else {
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parseFailure = /^<(!doctype|html|head|body|\?xml|[a-z])/i.test(trimmed)
        ? 'an HTML page instead of JSON'
        : unexpectedBody(raw.headers) ?? 'truncated or invalid JSON';
    }
  }
  const envelopeResult = parsed === undefined ? undefined : envelopeSchema.safeParse(parsed);
  const envelope = envelopeResult?.success ? envelopeResult.data : undefined;
  const loose = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  const rawMessage = envelopeText(loose?.message);
  const facts = {
    operation,
    status: raw.status,
    serviceMessage: rawMessage ? redact(rawMessage, token) : undefined,
    // The code is the service's words too: a hostile service can echo the token there as well as in the message.
    requestCode: requestCodeOf(envelopeText(loose?.code), token),
    retryAfterMs: parseRetryAfter(raw.headers['retry-after']),
  };
  if (raw.status < 200 || raw.status >= 300) throw statusError(facts);
  if (parseFailure) {
    throw new ApiError(
      `The service answered with ${parseFailure}`,
      'Check that the base URL points at the service API (a proxy, captive portal or login page may be in the way).',
      { ...facts, reason: 'format' },
    );
  }
  if (!envelope) {
    throw new ApiError(
      `The service's answer is not the expected envelope {code, message, data, success} (${describeIssue(envelopeResult!.error!)})`,
      'Check that the base URL points at the service API; report this with the request code if it does.',
      { ...facts, reason: 'format' },
    );
  }
  if (!envelope.success) {
    throw new ApiError(
      'The service reported a failure',
      'Read the service message above; fix the request or try again later.',
      { ...facts, reason: 'rejected' },
    );
  }
  // Everything but the prompt list goes on into logs, the journal and messages: the redacted words only.
  return { data: envelope.data, success: true, code: facts.requestCode, message: facts.serviceMessage ?? null };
}

/** The prompt items, extra fields dropped, when every item is {traceId: string, content: string}; else undefined. */
function plainPromptItems(data: unknown): PromptItem[] | undefined {
  if (!Array.isArray(data)) return undefined;
  const items = new Array<PromptItem>(data.length);
  for (let i = 0; i < data.length; i++) {
    const item = data[i] as { traceId?: unknown; content?: unknown } | null;
    if (item === null || typeof item !== 'object' || typeof item.traceId !== 'string' || typeof item.content !== 'string') return undefined;
    items[i] = { traceId: item.traceId, content: item.content };
  }
  return items;
}

/** Names a body that could never be JSON by its headers: compressed unasked, or of another media type. */
function unexpectedBody(headers: HttpHeaders): string | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim();
  const encoding = first(headers['content-encoding']);
  if (encoding && encoding.toLowerCase() !== 'identity') return `a ${truncate(encoding, 40)}-compressed body the client did not ask for`;
  const type = first(headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
  if (type && !/json|^text\/|^$/.test(type)) return `a ${truncate(type, 60)} body instead of JSON`;
  return undefined;
}

function statusError(facts: Omit<ApiErrorInit, 'reason'> & { status: number }): ApiError {
  const s = facts.status;
  if (s === 401 || s === 403) {
    return new AuthError(
      s === 401 ? 'The service rejected the personal access token' : 'The personal access token is not allowed to do this',
      'Set a valid personal access token and try again.',
      { ...facts, reason: 'auth' },
    );
  }
  if (s === 404) {
    return new ApiError(
      'The service found no such evaluation, trace or route',
      'Check the base URL, the evaluation id and its kind (benchmark or robustness).',
      { ...facts, reason: 'notFound' },
    );
  }
  if (s === 400 || s === 422) {
    return new ApiError('The service refused the request as invalid', 'Check the evaluation id, kind and trace id.', {
      ...facts,
      reason: 'badRequest',
    });
  }
  if (s === 413) {
    return new ApiError('The service refused the request as too large', 'The answer is longer than the service accepts; shorten it.', {
      ...facts,
      reason: 'tooLarge',
    });
  }
  if (s === 408) {
    return new ApiError('The service timed out waiting for the request', 'Try again; check your network if it keeps happening.', {
      ...facts,
      reason: 'timeout',
    });
  }
  if (s === 429) {
    return new ApiError('The service is limiting the request rate', 'Wait a little and try again, or lower the concurrency.', {
      ...facts,
      reason: 'rateLimited',
    });
  }
  if (s >= 500) {
    return new ApiError('The service failed to handle the request', 'This is on the service side; try again in a few minutes.', {
      ...facts,
      reason: 'server',
    });
  }
  if (s >= 300 && s < 400) {
    return new ApiError('The service answered with a redirect the client does not follow', 'Set the base URL to the address the service redirects to.', {
      ...facts,
      reason: 'redirect',
    });
  }
  return new ApiError('The service refused the request', 'Read the service message; check the evaluation id, kind and token.', {
    ...facts,
    reason: 'rejected',
  });
}
