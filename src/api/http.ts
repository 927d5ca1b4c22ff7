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
