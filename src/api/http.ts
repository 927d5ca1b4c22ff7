// HTTP for the API client and the HTTP targets: undici's Agent (keep-alive pools, its llhttp parser), driven
// through dispatch() with a handler that buffers the body. Two reasons: the package entry also pulls in fetch,
// WebSocket, EventSource, caches and mocks, which tripled the extension bundle; and undici's request() wraps
// every response in a Readable stream and an AbortController, which cost more CPU per trace than the rest of
// the run engine (`npm run bench` measures it).
import type { Agent as UndiciAgent, Dispatcher } from 'undici';

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

export function createHttpAgent(options: UndiciAgent.Options): HttpAgent {
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
      reject(signal.reason);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let abortWith: unknown;
    let settled = false;
    let statusCode = 0;
    let headers: HttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const abort = (reason: unknown) => {
      abortWith = reason;
      controller?.abort(reason as Error);
    };
    const onAbort = () => abort(signal!.reason);
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
          if (abortWith !== undefined) c.abort(abortWith as Error);
        },
        onResponseStart(_c, status, responseHeaders) {
          statusCode = status;
          headers = responseHeaders as HttpHeaders;
        },
        onResponseData(c, chunk) {
          size += chunk.length;
          if (maxBytes !== undefined && size > maxBytes) c.abort(new BodyTooLargeError(statusCode, maxBytes));
          else chunks.push(chunk);
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
