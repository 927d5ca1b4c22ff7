// The two parts of undici this project uses, loaded from their own files: the package entry also pulls in
// fetch, WebSocket, EventSource, caches and mocks, which tripled the extension bundle (issue 6 measures it).
import type { Agent as UndiciAgent, Dispatcher } from 'undici';

/* eslint-disable @typescript-eslint/no-require-imports */
const AgentImpl = require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
const requestImpl = require('undici/lib/api/api-request.js') as (
  this: Dispatcher,
  options: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

export type HttpAgent = UndiciAgent;
export type HttpResponse = Dispatcher.ResponseData;
export type HttpHeaders = Dispatcher.ResponseData['headers'];

export function createHttpAgent(options: UndiciAgent.Options): HttpAgent {
  return new AgentImpl(options);
}

export interface HttpRequestOptions {
  method: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
}

/** undici's `request(url, {dispatcher})`, without its package entry. */
export function httpRequest(agent: HttpAgent, url: string | URL, options: HttpRequestOptions): Promise<HttpResponse> {
  const target = new URL(url);
  return requestImpl.call(agent, { ...options, origin: target.origin, path: `${target.pathname}${target.search}` });
}
