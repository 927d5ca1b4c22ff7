import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EvaluationKind } from '../api/evaluationKinds';
import { SandboxBatches, isBatchApiPath } from './batchApi';
import { answerEcho } from './echoModel';
import { answeredHostCheck, answeredNames, isLoopbackHost } from './hostCheck';
import { sendHtml, sendJson } from './httpIo';
import { renderIndexPage, renderProcessDetailsPage } from './processDetailsPage';
import { seedPrompts } from './seed';
import { SandboxApi } from './serviceApi';
import { createEvaluation, summarise } from './store';
import type { EvaluationSummary, SandboxEvaluation } from './store';
import { refusalBeyondLoopback, secretCheck } from './tokenGate';
import type { GateRefusal } from './tokenGate';

export { wordCount } from './echoModel';
export { SUBMIT_DATA_CONVENTIONS } from './options';
export type { SandboxOptions, SandboxStats, SubmitDataConvention } from './options';
import type { SandboxOptions, SandboxStats } from './options';

export interface SandboxEvaluationInfo {
  evaluationId: number;
  kind: EvaluationKind;
  traces: number;
}

export interface Sandbox {
  readonly baseUrl: string;
  readonly token: string;
  readonly evaluations: readonly SandboxEvaluationInfo[];
  readonly stats: SandboxStats;
  readonly maxBodyBytes: number;
  summary(evaluationId: number): EvaluationSummary | undefined;
  /** The answer the sandbox holds for a trace (for tests and the page). */
  answerOf(evaluationId: number, traceId: string): string | undefined;
  submissionsOf(evaluationId: number, traceId: string): number;
  close(): Promise<void>;
}

export const SANDBOX_DEFAULTS = {
  host: '127.0.0.1',
  port: 8787,
  token: 'sandbox-token',
  benchmarkTraces: 25,
  robustnessTraces: 20,
  generationSeconds: 5,
  evaluationSeconds: 1,
  maxBodyBytes: 8 * 1024 * 1024,
} as const;

/** What the sandbox serves: its state and the API over it. */
interface Served {
  options: SandboxOptions;
  evaluations: Map<number, SandboxEvaluation>;
  stats: SandboxStats;
  api: SandboxApi;
  batches: SandboxBatches;
  evaluationDelayMs: number;
  maxBodyBytes: number;
  /** Whether a Host header names this sandbox (see answeredNames), and the words of a refusal. */
  isAnsweredHost: (header: string | undefined) => boolean;
  wrongHostText: string;
  /** Beyond loopback: what a request must show before any route answers it (undefined on loopback). */
  gate: ((path: string, authorization: string | undefined) => GateRefusal | undefined) | undefined;
}

interface Route {
  matches(method: string, path: string): boolean;
  handle(served: Served, req: IncomingMessage, res: ServerResponse, url: URL): void | Promise<void>;
}

/** Every page and endpoint of the sandbox, tried in order. */
const ROUTES: readonly Route[] = [
  { matches: (_m, path) => path.startsWith('/api/'), handle: async (s, req, res, url) => sendJson(res, await s.api.handle(req, url)) },
  { matches: (_m, path) => isBatchApiPath(path), handle: (s, req, res, url) => s.batches.handle(req, res, url) },
  {
    matches: (method, path) => method === 'POST' && path === '/v1/chat/completions',
    handle: async (s, req, res) => {
      const reply = await answerEcho(req, res, s.stats, s.options.modelLatencyMs ?? 0, s.maxBodyBytes);
      if (reply) sendJson(res, reply);
    },
  },
  { matches: (_m, path) => path === '/healthz', handle: (_s, _req, res) => sendJson(res, { status: 200, body: { ok: true } }) },
  {
    matches: (method, path) => method === 'GET' && path === '/',
    handle: (s, _req, res) => sendHtml(res, 200, renderIndexPage([...s.evaluations.values()].map((e) => summarise(e, s.evaluationDelayMs, Date.now())))),
  },
  {
    matches: (method, path) => method === 'GET' && EVALUATION_PAGE.test(path),
    handle: (s, _req, res, url) => {
      const evaluation = s.evaluations.get(Number(EVALUATION_PAGE.exec(url.pathname)![1]));
      if (!evaluation) return notFound(res);
      const page = Math.max(1, Number(url.searchParams.get('page')) || 1);
      sendHtml(res, 200, renderProcessDetailsPage(evaluation, s.evaluationDelayMs, Date.now(), page));
    },
  },
];
const EVALUATION_PAGE = /^\/evaluations\/(\d+)$/;

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? SANDBOX_DEFAULTS.host;
  // Anyone on the network knows the default token: it stays on this machine.
  if (!isLoopbackHost(host) && (options.token ?? SANDBOX_DEFAULTS.token) === SANDBOX_DEFAULTS.token) {
    throw new TypeError(`A sandbox on ${host}, beyond this machine's loopback, needs a token of its own, not ${SANDBOX_DEFAULTS.token}.`);
  }
  const served = serve(options);
  const server = createServer((req, res) => void route(served, req, res));
  server.keepAliveTimeout = 30_000;
  const port = options.port ?? SANDBOX_DEFAULTS.port;
  try {
    await listen(server, port, host);
  } catch (error) {
    // Another window's sandbox, or a parallel test, holds the port: the caller said any free one will do.
    if (!options.anyPortIfTaken || port === 0 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    await listen(server, 0, host);
  }
  return handleOf(served, server, options.token ?? SANDBOX_DEFAULTS.token);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The seeded evaluations (benchmark 1 at once; robustness 2 after its generation time) and the API over them. */
function serve(options: SandboxOptions): Served {
  const started = Date.now();
  const evaluations = new Map<number, SandboxEvaluation>();
  evaluations.set(1, createEvaluation(1, 'benchmark', seedPrompts('benchmark', options.benchmarkTraces ?? SANDBOX_DEFAULTS.benchmarkTraces, options.promptBytes), started));
  const generationMs = (options.generationSeconds ?? SANDBOX_DEFAULTS.generationSeconds) * 1000;
  evaluations.set(2, createEvaluation(2, 'robustness', seedPrompts('robustness', options.robustnessTraces ?? SANDBOX_DEFAULTS.robustnessTraces, options.promptBytes), started + generationMs));
  const stats: SandboxStats = { requests: new Map(), submissions: 0, modelCalls: 0, modelCallsByPrompt: new Map() };
  const maxBodyBytes = options.maxBodyBytes ?? SANDBOX_DEFAULTS.maxBodyBytes;
  const token = options.token ?? SANDBOX_DEFAULTS.token;
  const isToken = secretCheck(token);
  const api = new SandboxApi(options, isToken, evaluations, stats, maxBodyBytes);
  const evaluationDelayMs = (options.evaluationSeconds ?? SANDBOX_DEFAULTS.evaluationSeconds) * 1000;
  const hosts = answeredNames(options.host ?? SANDBOX_DEFAULTS.host);
  const gate = isLoopbackHost(options.host ?? SANDBOX_DEFAULTS.host) ? undefined : (path: string, authorization: string | undefined) => refusalBeyondLoopback(path, authorization, isToken);
  const wrongHostText = `Forbidden: this sandbox answers only requests addressed to ${[...hosts].slice(0, 4).join(', ')} (the Host header); a page under another name cannot read it.\n`;
  return { options, evaluations, stats, api, batches: new SandboxBatches(options), maxBodyBytes, evaluationDelayMs, isAnsweredHost: answeredHostCheck(hosts), wrongHostText, gate };
}

async function route(served: Served, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!served.isAnsweredHost(req.headers.host)) return wrongHost(served, res);
  try {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const refusal = served.gate?.(url.pathname, req.headers.authorization);
    if (refusal) return refuse(res, refusal);
    const key = `${req.method} ${url.pathname}`;
    served.stats.requests.set(key, (served.stats.requests.get(key) ?? 0) + 1);
    if (served.options.intercept && (await served.options.intercept(req, res))) return;
    const found = ROUTES.find((r) => r.matches(req.method ?? 'GET', url.pathname));
    if (found) await found.handle(served, req, res, url);
    else notFound(res);
  } catch (error) {
    if (!res.headersSent) sendJson(res, served.api.fail(500, `The sandbox failed: ${(error as Error).message}`));
    else res.destroy();
  }
}

/** A request addressed to another name (DNS rebinding): refused on every route, before anything is read or counted. */
function wrongHost(served: Served, res: ServerResponse): void {
  const text = served.wrongHostText;
  res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close' });
  res.end(text);
}

/** A request beyond loopback without the token: refused before its body is read or it is counted. */
function refuse(res: ServerResponse, refusal: GateRefusal): void {
  if ('json' in refusal) return sendJson(res, { ...refusal.json, headers: { ...refusal.json.headers, connection: 'close' } });
  res.writeHead(refusal.status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(refusal.text), connection: 'close' });
  res.end(refusal.text);
}

function notFound(res: ServerResponse): void {
  sendHtml(res, 404, '<!doctype html><title>Not found</title><p>Not found. Try <a href="/">the index</a>.</p>');
}

function handleOf(served: Served, server: Server, token: string): Sandbox {
  const { evaluations, evaluationDelayMs } = served;
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    baseUrl: `http://${hostPart}:${address.port}`,
    token,
    maxBodyBytes: served.maxBodyBytes,
    evaluations: [...evaluations.values()].map((e) => ({ evaluationId: e.evaluationId, kind: e.kind, traces: e.traces.size })),
    stats: served.stats,
    summary: (id) => {
      const e = evaluations.get(id);
      return e ? summarise(e, evaluationDelayMs, Date.now()) : undefined;
    },
    answerOf: (id, traceId) => evaluations.get(id)?.traces.get(traceId)?.answer,
    submissionsOf: (id, traceId) => evaluations.get(id)?.traces.get(traceId)?.submissions ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
