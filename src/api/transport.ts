// The transport: one request to the service's origin and nothing else (redirects followed only within it, the
// origin checked before every send), its deadline and size cap, and retries under the policy. Everything the
// service says is read by errorMapping.ts; which requests exist is routes.ts's.
import { ApiError, abortReason, truncate } from './errors';
import { interpret, isRetryable, transportError } from './errorMapping';
import type { Method, RawResponse } from './errorMapping';
import { encodeForm } from './formBody';
import { BodyTooLargeError, DeadlineError, createHttpAgent, httpRequest, httpStreamRequest } from './http';
import type { BodyReader, HttpAgent, HttpHeaders } from './http';
import type { RequestEncoding } from './evaluationKinds';
import { checkProxyConfig, proxyFor } from './proxy';
import type { ProxyConfig } from './proxy';
import { retryDelay, sleep } from './retry';
import type { RetryPolicy } from './retry';
import type { Envelope } from './schemas';

export const MIB = 1024 * 1024;
const MAX_REDIRECTS = 5;

/** One request as a route declares it. */
export interface RequestSpec {
  method: Method;
  path: string;
  query?: Record<string, string>;
  form?: ReadonlyArray<readonly [string, string]>;
  /** What the request does, in the user's words (errors name it). */
  operation: string;
  maxBytes: number;
  attempts?: number;
  /** The words for a body over maxBytes, when they are the request's own (the prompt list names its setting and flag). */
  tooLarge?: { summary: string; hint: string };
}

/** A successful (2xx) body read as it streams in (Transport.stream). */
export interface StreamedBody<T> extends BodyReader {
  /** The body has ended: its meaning, or the ApiError saying what is wrong with it. */
  end(): Promise<T>;
}

/** Opens the reader of one attempt's successful body; null when it may not be tried again. */
export type OpenStream<T> = (status: number, headers: HttpHeaders, attempt: number) => StreamedBody<T>;

// What is kept of a failure's body (its envelope says why): enough for any service's message.
const ERROR_BODY_BYTES = MIB;

export interface TransportOptions {
  base: URL;
  token: string;
  encoding: RequestEncoding;
  timeoutMs: number;
  policy: RetryPolicy;
  connections: number;
  userAgent: string;
  /** undefined: direct. */
  proxy: ProxyConfig | undefined;
  onRetry?: (event: { operation: string; attempt: number; delayMs: number; error: ApiError }) => void;
}

export class Transport {
  private readonly agent: HttpAgent;
  private readonly headersBase: Record<string, string>;
  private readonly basePath: string;
  /** The proxy this service is reached through (undefined: direct), named in connection errors. */
  private readonly via: string | undefined;
  private readonly origin: string;
  /**
   * The URL of each path asked without a query (a submission's), made once: a URL parsed and its path set again per
   * request cost a 20,000-trace run some 40 ms of CPU (issue 36). Never changed once made; a redirect makes its own.
   */
  private readonly plainUrls = new Map<string, URL>();

  constructor(private readonly options: TransportOptions) {
    checkProxyConfig(options.proxy);
    this.via = proxyFor(options.proxy, options.base);
    this.agent = createHttpAgent(
      { connections: options.connections, keepAliveTimeout: 10_000, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs },
      options.proxy,
    );
    this.headersBase = { authorization: `Bearer ${options.token}`, accept: 'application/json', 'user-agent': options.userAgent };
    this.basePath = options.base.pathname.replace(/\/+$/, '');
    this.origin = options.base.origin;
  }

  /** The base URL without a trailing slash. */
  get baseUrl(): string {
    return this.options.base.origin + this.basePath;
  }

  /** Sends the request, retrying what the policy allows; the success envelope, or the ApiError that explains. */
  async call(spec: RequestSpec, signal: AbortSignal | undefined): Promise<Envelope> {
    const { policy } = this.options;
    const maxAttempts = spec.attempts ?? policy.maxAttempts;
    for (let attemptNo = 1; ; attemptNo++) {
      try {
        const raw = await this.send(spec, signal);
        return interpret(raw, spec.operation, this.options.token);
      } catch (error) {
        if (!(error instanceof ApiError) || attemptNo >= maxAttempts || !isRetryable(spec.method, error)) throw error;
        const delayMs = retryDelay(error.retryAfterMs, attemptNo, policy);
        if (delayMs === undefined) throw error;
        this.options.onRetry?.({ operation: spec.operation, attempt: attemptNo, delayMs, error });
        await sleep(delayMs, signal);
      }
    }
  }

  /**
   * Sends a GET whose successful body is read as it arrives (a list of any size), never held whole. A failure's
   * body is kept (up to 1 MiB) and read as call() reads it. A failed attempt is tried again where the policy and
   * `mayRetry` (asked with the error) allow: the next attempt's reader is told which attempt it is.
   */
  async stream<T>(spec: RequestSpec, signal: AbortSignal | undefined, open: OpenStream<T>, mayRetry: (error: ApiError) => boolean): Promise<T> {
    const { policy } = this.options;
    const maxAttempts = spec.attempts ?? policy.maxAttempts;
    for (let attemptNo = 1; ; attemptNo++) {
      try {
        const opened: { body?: StreamedBody<T> } = {};
        const raw = await this.send(spec, signal, (status, headers) => readerOf((opened.body = open(status, headers, attemptNo))));
        if (opened.body && raw.status >= 200 && raw.status < 300) return await opened.body.end();
        interpret(raw, spec.operation, this.options.token);
        throw new ApiError('The service answered without a body to read', 'Report this with the request code.', { reason: 'format', operation: spec.operation, status: raw.status });
      } catch (error) {
        if (!(error instanceof ApiError) || attemptNo >= maxAttempts || !isRetryable(spec.method, error) || !mayRetry(error)) throw error;
        const delayMs = retryDelay(error.retryAfterMs, attemptNo, policy);
        if (delayMs === undefined) throw error;
        this.options.onRetry?.({ operation: spec.operation, attempt: attemptNo, delayMs, error });
        await sleep(delayMs, signal);
      }
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async send(spec: RequestSpec, signal: AbortSignal | undefined, streamTo?: (status: number, headers: HttpHeaders) => BodyReader): Promise<RawResponse> {
    let url = spec.query ? this.urlOf(spec.path, spec.query) : this.plainUrl(spec.path);
    const form = spec.form ? encodeForm(spec.form, this.options.encoding) : undefined;
    for (let hop = 0; ; hop++) {
      const response = await this.attempt(url, spec, form, signal, streamTo);
      if (response.status < 300 || response.status >= 400 || response.status === 304) return response;
      const location = firstHeader(response.headers.location);
      const init = { operation: spec.operation, status: response.status };
      if (!location) return response;
      const target = new URL(location, url);
      if (target.origin !== this.options.base.origin) {
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

  /**
   * A copy of the base URL with its path and query set: never resolved against it, where a path starting with // would
   * name another host.
   */
  private urlOf(path: string, query: Record<string, string> | undefined): URL {
    const url = new URL(this.options.base.href);
    url.pathname = this.basePath + path;
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    return url;
  }

  private plainUrl(path: string): URL {
    let url = this.plainUrls.get(path);
    if (!url) this.plainUrls.set(path, (url = this.urlOf(path, undefined)));
    return url;
  }

  private async attempt(
    url: URL,
    spec: RequestSpec,
    form: ReturnType<typeof encodeForm> | undefined,
    callerSignal: AbortSignal | undefined,
    streamTo?: (status: number, headers: HttpHeaders) => BodyReader,
  ): Promise<RawResponse> {
    if (callerSignal?.aborted) throw abortReason(callerSignal);
    // The last word before the token leaves: whatever built this URL, it goes to the base URL's origin or nowhere.
    if (url.origin !== this.origin) {
      throw new ApiError(
        `A request was about to go to ${url.origin} instead of the service at ${this.origin}; it was not sent`,
        'Check the base URL; report this if it is right.',
        { reason: 'redirect', operation: spec.operation },
      );
    }
    try {
      const headers: Record<string, string> = form ? { ...this.headersBase, 'content-type': form.contentType } : this.headersBase;
      if (streamTo) return await this.streamAttempt(url, spec, headers, callerSignal, streamTo);
      const res = await httpRequest(this.agent, url, {
        method: spec.method,
        headers,
        ...(form ? { body: form.body } : {}),
        ...(callerSignal ? { signal: callerSignal } : {}),
        deadlineMs: this.options.timeoutMs,
        maxBytes: spec.maxBytes,
      });
      return { status: res.statusCode, headers: res.headers, text: res.body.toString('utf8') };
    } catch (error) {
      // The reader's own failure (the body's meaning, or the caller's sink) is said as it is.
      if (error instanceof ReaderFailure) throw error.cause;
      if (callerSignal?.aborted) throw abortReason(callerSignal);
      if (error instanceof BodyTooLargeError) {
        throw new ApiError(
          spec.tooLarge?.summary ?? `The service's answer was larger than ${Math.round(spec.maxBytes / MIB)} MiB`,
          spec.tooLarge?.hint ?? 'Check the base URL; the service sent far more than an answer to this request can be.',
          { reason: 'tooLarge', operation: spec.operation, status: error.statusCode },
        );
      }
      throw transportError(error, spec.operation, error instanceof DeadlineError, this.options.base.origin, this.via);
    }
  }

  /** One streamed attempt: a 2xx body goes to the caller's reader; any other is kept (its first MiB) to be read whole. */
  private async streamAttempt(
    url: URL,
    spec: RequestSpec,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    streamTo: (status: number, headers: HttpHeaders) => BodyReader,
  ): Promise<RawResponse> {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const keep: BodyReader = {
      data: (chunk) => {
        if (keptBytes < ERROR_BODY_BYTES) kept.push(chunk.subarray(0, ERROR_BODY_BYTES - keptBytes));
        keptBytes += chunk.length;
      },
    };
    const res = await httpStreamRequest(
      this.agent,
      url,
      { method: spec.method, headers, ...(signal ? { signal } : {}), headersDeadlineMs: this.options.timeoutMs, maxBytes: spec.maxBytes },
      (status, responseHeaders) => (status >= 200 && status < 300 ? streamTo(status, responseHeaders) : keep),
    );
    return { status: res.statusCode, headers: res.headers, text: Buffer.concat(kept).toString('utf8') };
  }
}

/** A failure of a streamed body's reader, told apart from the transport's own on the way out. */
class ReaderFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('reader failed');
  }
}

/** The reader with its failures marked as its own. */
function readerOf(reader: BodyReader): BodyReader {
  return {
    data(chunk) {
      let pending: void | Promise<void>;
      try {
        pending = reader.data(chunk);
      } catch (error) {
        throw new ReaderFailure(error);
      }
      return pending?.catch((error: unknown) => {
        throw new ReaderFailure(error);
      });
    },
  };
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
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
