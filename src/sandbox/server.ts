import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KIND_ROUTES } from '../api/kinds';
import type { EvaluationKind } from '../api/kinds';
import { multipartBoundary, parseMultipart } from './multipart';
import { renderIndexPage, renderProcessDetailsPage } from './processDetailsPage';
import { seedPrompts } from './seed';
import { createEvaluation, summarise } from './store';
import type { EvaluationSummary, SandboxEvaluation } from './store';

export interface SandboxOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  token?: string;
  benchmarkTraces?: number;
  robustnessTraces?: number;
  /** Robustness prompts become listable this long after start. */
  generationSeconds?: number;
  /** The simulated evaluator's delay between an answer and Evaluated. */
  evaluationSeconds?: number;
  /** Added before every API answer. */
  latencyMs?: number;
  /** This fraction of API requests is answered 503. */
  failRate?: number;
  /** Largest accepted request body; larger ones get 413. */
  maxBodyBytes?: number;
  /** Latency of the sandbox's echo model at /v1/chat/completions. */
  modelLatencyMs?: number;
  /**
   * What a successful submit puts in `data`, where the spec shows a success text: another implementation of
   * the service may send null, an object or nothing (`--submit-data`).
   */
  submitData?: SubmitDataConvention;
  /** Business errors (a wrong token, an unknown trace…) as HTTP 200 with success: false (`--errors-as-200`). */
  errorsAs200?: boolean;
  /**
   * Test hook: sees every request first and may answer it itself (return true). Lets tests inject faults
   * into a faithful service without a second implementation.
   */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
}

export const SUBMIT_DATA_CONVENTIONS = ['text', 'null', 'object', 'absent'] as const;
export type SubmitDataConvention = (typeof SUBMIT_DATA_CONVENTIONS)[number];

export interface SandboxEvaluationInfo {
  evaluationId: number;
  kind: EvaluationKind;
  traces: number;
}

export interface SandboxStats {
  /** Requests per "METHOD path" (query excluded). */
  requests: Map<string, number>;
  /** Accepted submissions in all, repeats included. */
  submissions: number;
  /** Calls of the echo model, in all and per prompt. */
  modelCalls: number;
  modelCallsByPrompt: Map<string, number>;
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

interface Reply {
  status: number;
  body: unknown;
  /** The body already serialised (then `body` is unused). */
  text?: string;
  headers?: Record<string, string>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? SANDBOX_DEFAULTS.host;
  const token = options.token ?? SANDBOX_DEFAULTS.token;
  const evaluationDelayMs = (options.evaluationSeconds ?? SANDBOX_DEFAULTS.evaluationSeconds) * 1000;
  const maxBodyBytes = options.maxBodyBytes ?? SANDBOX_DEFAULTS.maxBodyBytes;
  const latencyMs = options.latencyMs ?? 0;
  const failRate = options.failRate ?? 0;
  const started = Date.now();
  const evaluations = new Map<number, SandboxEvaluation>();
  const benchmarkCount = options.benchmarkTraces ?? SANDBOX_DEFAULTS.benchmarkTraces;
  const robustnessCount = options.robustnessTraces ?? SANDBOX_DEFAULTS.robustnessTraces;
  evaluations.set(1, createEvaluation(1, 'benchmark', seedPrompts('benchmark', benchmarkCount), started));
  const generationMs = (options.generationSeconds ?? SANDBOX_DEFAULTS.generationSeconds) * 1000;
  evaluations.set(2, createEvaluation(2, 'robustness', seedPrompts('robustness', robustnessCount), started + generationMs));
  const listJson = new Map<number, string>();
  const stats: SandboxStats = { requests: new Map(), submissions: 0, modelCalls: 0, modelCallsByPrompt: new Map() };

  const envelope = (success: boolean, message: string, data: unknown) => ({
    code: `req_${randomUUID().replace(/-/g, '').slice(0, 20)}`,
    message,
    data,
    success,
  });
  // With errorsAs200 every refusal is a 200 whose envelope says success: false (rate limits keep their 429).
  const fail = (status: number, message: string, headers?: Record<string, string>): Reply => ({
    status: options.errorsAs200 && status !== 429 ? 200 : status,
    body: envelope(false, message, null),
    ...(headers ? { headers } : {}),
  });
  const submittedData = (traceId: string): unknown => {
    switch (options.submitData ?? 'text') {
      case 'text':
        return `Recorded the response for trace ${traceId}.`;
      case 'null':
        return null;
      case 'object':
        return { traceId, recorded: true };
      case 'absent':
        return undefined;
    }
  };

  function listPrompts(kind: EvaluationKind, url: URL): Reply {
    const id = parseId(url.searchParams.get('evaluationId'));
    if (id === undefined) return fail(400, 'Query parameter evaluationId is required and must be a number.');
    const evaluation = evaluations.get(id);
    if (!evaluation || evaluation.kind !== kind) return fail(404, `No ${kind} evaluation with id ${id}.`);
    const now = Date.now();
    if (now < evaluation.readyAt) {
      const left = Math.ceil((evaluation.readyAt - now) / 1000);
      return fail(409, `Adversarial prompt generation for evaluation ${id} is still running (about ${left} s left).`, {
        'retry-after': String(left),
      });
    }
    for (const trace of evaluation.traces.values()) trace.listed = true;
    // The prompts never change: serialised once, as a real service would cache them (100k: 30 ms a time).
    const data = listJson.get(id) ?? JSON.stringify(evaluation.items);
    listJson.set(id, data);
    const { code, message } = envelope(true, 'Prompts retrieved successfully', null);
    return { status: 200, body: undefined, text: `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)},"data":${data},"success":true}` };
  }

  function submit(kind: EvaluationKind, fields: Map<string, string>): Reply {
    const route = KIND_ROUTES[kind];
    const wrongField = KIND_ROUTES[kind === 'benchmark' ? 'robustness' : 'benchmark'].answerField;
    if (fields.has(wrongField)) {
      return fail(400, `Field ${wrongField} is not accepted here: ${kind} submissions carry ${route.answerField}.`);
    }
    const idText = fields.get('evaluationId');
    if (idText === undefined) return fail(400, 'Field evaluationId is required.');
    const id = parseId(idText);
    if (id === undefined) return fail(400, 'Field evaluationId must be a number.');
    const traceId = fields.get('traceId');
    if (traceId === undefined) return fail(400, 'Field traceId is required.');
    const answer = fields.get(route.answerField);
    if (answer === undefined) return fail(400, `Field ${route.answerField} is required.`);
    const evaluation = evaluations.get(id);
    if (!evaluation || evaluation.kind !== kind) return fail(404, `No ${kind} evaluation with id ${id}.`);
    if (Date.now() < evaluation.readyAt) return fail(409, `Adversarial prompts of evaluation ${id} are not generated yet.`);
    const trace = evaluation.traces.get(traceId);
    if (!trace) return fail(404, `Evaluation ${id} has no trace ${JSON.stringify(traceId)}.`);
    // A later submission replaces the earlier one and restarts its evaluation.
    trace.answer = answer;
    trace.respondedAt = Date.now();
    trace.listed = true;
    trace.submissions++;
    stats.submissions++;
    return { status: 200, body: envelope(true, 'Response submitted successfully', submittedData(traceId)) };
  }

  async function handleApi(req: IncomingMessage, url: URL): Promise<Reply> {
    const auth = req.headers.authorization;
    if (!auth || !auth.startsWith('Bearer ')) return fail(401, 'Missing Authorization header: send "Authorization: Bearer <token>".');
    if (auth.slice(7) !== token) return fail(401, 'The personal access token is not valid.');
    const kind = (Object.keys(KIND_ROUTES) as EvaluationKind[]).find(
      (k) => KIND_ROUTES[k].listPath === url.pathname || KIND_ROUTES[k].submitPath === url.pathname,
    );
    if (!kind) return fail(404, `No route ${url.pathname}.`);
    const isList = KIND_ROUTES[kind].listPath === url.pathname;
    if (latencyMs > 0) await delay(latencyMs);
    if (failRate > 0 && Math.random() < failRate) return fail(503, 'The sandbox injected a failure (--fail-rate); try again.');
    if (isList) {
      if (req.method !== 'GET') return fail(405, `${url.pathname} takes GET.`, { allow: 'GET' });
      return listPrompts(kind, url);
    }
    if (req.method !== 'POST') return fail(405, `${url.pathname} takes POST.`, { allow: 'POST' });
    const body = await readBody(req, maxBodyBytes);
    if (body === 'tooLarge') return fail(413, `The request body is larger than the sandbox limit of ${maxBodyBytes} bytes.`);
    const fields = parseForm(req.headers['content-type'] ?? '', body);
    if (fields === 'unsupported') {
      return fail(415, 'The body must be application/x-www-form-urlencoded or multipart/form-data.');
    }
    if (fields === 'malformed') return fail(400, 'The multipart/form-data body is malformed.');
    return submit(kind, fields);
  }

  async function handleModel(req: IncomingMessage, res: ServerResponse): Promise<Reply | undefined> {
    const body = await readBody(req, maxBodyBytes);
    if (body === 'tooLarge') return { status: 413, body: { error: { message: 'too large' } } };
    let prompt = '';
    let stream = false;
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { messages?: Array<{ role?: string; content?: unknown }>; stream?: unknown };
      const last = [...(parsed.messages ?? [])].reverse().find((m) => m.role === 'user');
      prompt = typeof last?.content === 'string' ? last.content : '';
      stream = parsed.stream === true;
    } catch {
      return { status: 400, body: { error: { message: 'The body must be JSON.' } } };
    }
    stats.modelCalls++;
    stats.modelCallsByPrompt.set(prompt, (stats.modelCallsByPrompt.get(prompt) ?? 0) + 1);
    if (stream) {
      await streamEcho(res, prompt, options.modelLatencyMs ?? 0);
      return undefined;
    }
    if (options.modelLatencyMs) await delay(options.modelLatencyMs);
    return {
      status: 200,
      body: {
        id: `chatcmpl-${randomUUID()}`,
        object: 'chat.completion',
        model: 'sandbox-echo',
        choices: [{ index: 0, message: { role: 'assistant', content: prompt }, finish_reason: 'stop' }],
        // Tokens as a real endpoint reports them; here one per word, so tests can check the sums.
        usage: { prompt_tokens: wordCount(prompt), completion_tokens: wordCount(prompt), total_tokens: 2 * wordCount(prompt) },
      },
    };
  }

  function sendJson(res: ServerResponse, reply: Reply): void {
    const text = reply.text ?? JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      ...reply.headers,
    });
    res.end(text);
  }

  function sendHtml(res: ServerResponse, status: number, html: string): void {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
      'content-length': Buffer.byteLength(html),
    });
    res.end(html);
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
      const key = `${req.method} ${url.pathname}`;
      stats.requests.set(key, (stats.requests.get(key) ?? 0) + 1);
      if (options.intercept && (await options.intercept(req, res))) return;
      if (url.pathname.startsWith('/api/')) {
        sendJson(res, await handleApi(req, url));
      } else if (url.pathname === '/v1/chat/completions' && req.method === 'POST') {
        const reply = await handleModel(req, res);
        if (reply) sendJson(res, reply);
      } else if (url.pathname === '/healthz') {
        sendJson(res, { status: 200, body: { ok: true } });
      } else if (url.pathname === '/' && req.method === 'GET') {
        sendHtml(res, 200, renderIndexPage([...evaluations.values()].map((e) => summarise(e, evaluationDelayMs, Date.now()))));
      } else {
        const match = /^\/evaluations\/(\d+)$/.exec(url.pathname);
        const evaluation = match ? evaluations.get(Number(match[1])) : undefined;
        if (evaluation && req.method === 'GET') {
          const page = Math.max(1, Number(url.searchParams.get('page')) || 1);
          sendHtml(res, 200, renderProcessDetailsPage(evaluation, evaluationDelayMs, Date.now(), page));
        } else {
          sendHtml(res, 404, '<!doctype html><title>Not found</title><p>Not found. Try <a href="/">the index</a>.</p>');
        }
      }
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, fail(500, `The sandbox failed: ${(error as Error).message}`));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? SANDBOX_DEFAULTS.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    baseUrl: `http://${hostPart}:${address.port}`,
    token,
    maxBodyBytes,
    evaluations: [...evaluations.values()].map((e) => ({ evaluationId: e.evaluationId, kind: e.kind, traces: e.traces.size })),
    stats,
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

function parseId(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || !/^\d{1,15}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Beyond the limit the body is still read (and dropped) up to this much, so the client gets the 413.
const DRAIN_CAP_BYTES = 64 * 1024 * 1024;

/** Reads the whole body; past the limit it keeps draining (so the client sees the 413, not a reset). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'tooLarge'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > limit + DRAIN_CAP_BYTES) req.destroy();
    });
    req.on('end', () => resolve(size > limit ? 'tooLarge' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseForm(contentType: string, body: Buffer): Map<string, string> | 'unsupported' | 'malformed' {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const fields = new Map<string, string>();
    for (const [k, v] of new URLSearchParams(body.toString('utf8'))) if (!fields.has(k)) fields.set(k, v);
    return fields;
  }
  if (type === 'multipart/form-data') {
    const boundary = multipartBoundary(contentType);
    return (boundary && parseMultipart(body, boundary)) || 'malformed';
  }
  return 'unsupported';
}

/**
 * The echo model's answer as OpenAI streams it (stream: true): server-sent events of a few characters each,
 * the first after the model's latency, a last one with the usage, then [DONE].
 */
async function streamEcho(res: ServerResponse, prompt: string, latencyMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const id = `chatcmpl-${randomUUID()}`;
  const event = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
  if (latencyMs) await delay(latencyMs);
  const chars = [...prompt];
  const size = Math.max(1, Math.ceil(chars.length / 8));
  for (let i = 0; i < chars.length; i += size) {
    event({ id, object: 'chat.completion.chunk', model: 'sandbox-echo', choices: [{ index: 0, delta: { content: chars.slice(i, i + size).join('') }, finish_reason: null }] });
    if (latencyMs) await delay(Math.min(20, latencyMs / 10));
  }
  event({ id, object: 'chat.completion.chunk', model: 'sandbox-echo', choices: [], usage: { prompt_tokens: wordCount(prompt), completion_tokens: wordCount(prompt), total_tokens: 2 * wordCount(prompt) } });
  res.end('data: [DONE]\n\n');
}

/** The sandbox model's token count: one per whitespace-separated word. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
