// HTTP for the API client and the HTTP targets: undici's Agent (keep-alive pools, its llhttp parser), driven
// through dispatch() with a handler that buffers the body. Two reasons: the package entry also pulls in fetch,
// WebSocket, EventSource, caches and mocks, which tripled the extension bundle; and undici's request() wraps
// every response in a Readable stream and an AbortController, which cost more CPU per trace than the rest of
// the run engine (`npm run bench` measures it).
import type { Agent as UndiciAgent, Dispatcher, EnvHttpProxyAgent } from 'undici';
import { abortReason } from './errors';
import type { ProxyConfig } from './proxy';

// Required on first use, not at load: undici's module set (HTTP/1 and HTTP/2 clients, parser) is most of what
// the extension would otherwise initialise at activation, before anything talks to a service.
let AgentImpl: typeof UndiciAgent | undefined;

export type HttpAgent = UndiciAgent;
export type HttpHeaders = Record<string, string | string[] | undefined>;

export interface HttpResponse {
  statusCode: number;
  headers: HttpHeaders;
  body: Buffer;
}

let ProxyAgentImpl: typeof EnvHttpProxyAgent | undefined;

/**
 * An agent for requests; with a proxy configured, undici's EnvHttpProxyAgent (CONNECT tunnels, NO_PROXY)
 * on exactly this configuration: the environment is read by the caller (proxyFromEnv), never behind its back.
 * Without one, a plain Agent: the proxy agent parses every request's origin, a cost the common case skips.
 */
export function createHttpAgent(options: UndiciAgent.Options, proxy?: ProxyConfig): HttpAgent {
  if (proxy?.httpProxy || proxy?.httpsProxy) {
    if (!ProxyAgentImpl) {
      // The proxy agent opens its tunnels with dispatcher.connect(), an API method undici's package entry adds
      // to every dispatcher; the entry is not loaded here (see the top of this file), so add that one method.
      /* eslint-disable @typescript-eslint/no-require-imports */
      const base = (require('undici/lib/dispatcher/dispatcher.js') as { prototype: Record<string, unknown> }).prototype;
      base.connect ??= require('undici/lib/api/api-connect.js') as unknown;
      ProxyAgentImpl = require('undici/lib/dispatcher/env-http-proxy-agent.js') as typeof EnvHttpProxyAgent;
      /* eslint-enable @typescript-eslint/no-require-imports */
    }
    return new ProxyAgentImpl({
      ...options,
      // Empty strings, not undefined: undici would otherwise fall back to the process environment.
      httpProxy: proxy.httpProxy ?? '',
      httpsProxy: proxy.httpsProxy ?? '',
      noProxy: proxy.noProxy ?? '',
      ...(proxy.authorization ? { token: proxy.authorization } : {}),
      ...(proxy.strictSSL === false ? { proxyTls: { rejectUnauthorized: false } } : {}),
    }) as unknown as HttpAgent;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  AgentImpl ??= require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
  return new AgentImpl(options);
}

export interface HttpRequestOptions {
  method: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  /** The whole exchange, however slowly the bytes come; undici's own time-outs watch the gaps. */
  deadlineMs?: number;
  /** A longer body aborts the request with BodyTooLargeError. */
  maxBytes?: number;
  /** Sees each piece of a successful (2xx) body as it arrives: a streamed answer's first token is timed here. */
  onChunk?: (chunk: Buffer) => void;
}

export class BodyTooLargeError extends Error {
  constructor(readonly statusCode: number, readonly limit: number) {
    super(`response body larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export class DeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`no complete answer within ${deadlineMs} ms`);
    this.name = 'DeadlineError';
  }
}

/** One request; resolves with the whole body. Rejects with the signal's reason when it aborts. */
export function httpRequest(agent: HttpAgent, url: string | URL, options: HttpRequestOptions): Promise<HttpResponse> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const { signal, maxBytes } = options;
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let abortWith: Error | undefined;
    let settled = false;
    let statusCode = 0;
    let headers: HttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const abort = (reason: Error) => {
      abortWith = reason;
      controller?.abort(reason);
    };
    const onAbort = () => abort(abortReason(signal!));
    const timer = options.deadlineMs ? setTimeout(() => abort(new DeadlineError(options.deadlineMs!)), options.deadlineMs) : undefined;
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    agent.dispatch(
      {
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: options.method,
        headers: options.headers ?? {},
        body: options.body ?? null,
      },
      {
        onRequestStart(c) {
          controller = c;
          if (abortWith !== undefined) c.abort(abortWith);
        },
        onResponseStart(_c, status, responseHeaders) {
          statusCode = status;
          headers = responseHeaders;
        },
        onResponseData(c, chunk) {
          size += chunk.length;
          if (maxBytes !== undefined && size > maxBytes) c.abort(new BodyTooLargeError(statusCode, maxBytes));
          else {
            chunks.push(chunk);
            if (options.onChunk && statusCode >= 200 && statusCode < 300) options.onChunk(chunk);
          }
        },
        onResponseEnd() {
          settle(() => resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) }));
        },
        onResponseError(_c, error) {
          settle(() => reject(abortWith ?? error));
        },
      },
    );
  });
}

/** Reads a body as it arrives (httpStreamRequest). */
export interface BodyReader {
  /** One piece; a promise pauses the body until it settles, and a rejection aborts the request with its reason. */
  data(chunk: Buffer): void | Promise<void>;
}

export interface StreamRequestOptions extends Omit<HttpRequestOptions, 'deadlineMs' | 'onChunk'> {
  /** Until the response's headers; then undici's own time-out watches the gaps between pieces of the body. */
  headersDeadlineMs?: number;
}

/**
 * Hands a body's pieces to its reader one at a time, in order: while the reader's promise is pending the body is
 * paused and later pieces wait (undici may hand on one after a pause). A reader's failure aborts the request.
 */
class BodyPump {
  private readonly waiting: Buffer[] = [];
  private busy = false;
  private ended = false;

  constructor(
    private readonly reader: BodyReader,
    private readonly abort: (reason: Error) => void,
    private readonly failed: () => boolean,
    private readonly finish: () => void,
  ) {}

  push(c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.waiting.push(chunk);
    if (this.busy) c.pause();
    else this.drain(c);
  }

  /** The body ended (or failed): settles once the reader's work under way is done, never while it runs. */
  end(): void {
    this.ended = true;
    if (!this.busy) this.finish();
  }

  private drain(c: Dispatcher.DispatchController): void {
    while (!this.busy && this.waiting.length > 0 && !this.failed()) {
      let pending: void | Promise<void>;
      try {
        pending = this.reader.data(this.waiting.shift()!);
      } catch (error) {
        this.abort(error as Error);
        break;
      }
      if (pending) {
        this.busy = true;
        c.pause();
        pending.then(
          () => this.resumed(c),
          (error: unknown) => {
            this.busy = false;
            this.abort(error as Error);
            if (this.ended) this.finish();
          },
        );
      }
    }
    if (this.failed()) this.waiting.length = 0;
  }

  private resumed(c: Dispatcher.DispatchController): void {
    this.busy = false;
    this.drain(c);
    if (this.busy) return;
    if (this.ended) this.finish();
    else c.resume();
  }
}

/**
 * One request whose body is handed to a reader piece by piece, never kept whole: `open` picks the reader once the
 * status and headers are known. While a reader's promise is pending the socket is paused (backpressure) and no
 * other piece reaches it. Resolves once the body has ended and the reader has taken every piece.
 */
export function httpStreamRequest(
  agent: HttpAgent,
  url: URL,
  options: StreamRequestOptions,
  open: (statusCode: number, headers: HttpHeaders) => BodyReader,
): Promise<{ statusCode: number; headers: HttpHeaders }> {
  const { signal, maxBytes } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let abortWith: Error | undefined;
    let statusCode = 0;
    let headers: HttpHeaders = {};
    let pump: BodyPump | undefined;
    let size = 0;
    const abort = (reason: Error) => {
      abortWith ??= reason;
      controller?.abort(reason);
    };
    const onAbort = () => abort(abortReason(signal!));
    let timer = options.headersDeadlineMs ? setTimeout(() => abort(new DeadlineError(options.headersDeadlineMs!)), options.headersDeadlineMs) : undefined;
    signal?.addEventListener('abort', onAbort, { once: true });
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const failure = abortWith;
      if (failure) reject(failure);
      else resolve({ statusCode, headers });
    };
    agent.dispatch(
      { origin: url.origin, path: `${url.pathname}${url.search}`, method: options.method, headers: options.headers ?? {}, body: options.body ?? null },
      {
        onRequestStart(c) {
          controller = c;
          if (abortWith !== undefined) c.abort(abortWith);
        },
        onResponseStart(_c, status, responseHeaders) {
          clearTimeout(timer);
          timer = undefined;
          statusCode = status;
          headers = responseHeaders;
          try {
            pump = new BodyPump(open(status, responseHeaders), abort, () => abortWith !== undefined, finish);
          } catch (error) {
            abort(error as Error);
          }
        },
        onResponseData(c, chunk) {
          if (abortWith || !pump) return;
          size += chunk.length;
          if (maxBytes !== undefined && size > maxBytes) abort(new BodyTooLargeError(statusCode, maxBytes));
          else pump.push(c, chunk);
        },
        onResponseEnd() {
          if (pump) pump.end();
          else finish();
        },
        onResponseError(_c, error) {
          abortWith ??= error;
          if (pump) pump.end();
          else finish();
        },
      },
    );
  });
}
