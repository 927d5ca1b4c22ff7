import { randomBytes } from 'node:crypto';
import { BodyTooLargeError, httpRequest } from '../../../api/http';
import type { HttpAgent } from '../../../api/http';
import { backoffDelay, parseRetryAfter, sleep } from '../../../api/retry';
import type { RetryPolicy } from '../../../api/retry';
import { chatBody, openAiHeaders } from './openaiTarget';
import { createTargetAgent, targetProxy } from '../targetHttp';
import { redactSecrets, targetSecrets } from '../targetSecrets';
import type { BatchLimits, TargetOptions, TargetSecrets, TargetSpec } from '../targetSpec';
import type { OpenAiTargetOptions } from './openaiTarget';
import { TargetError } from '../target';

/** OpenAI's Batch API, as far as a run uses it (https://platform.openai.com/docs/guides/batch). */
export interface BatchApi {
  /** One line of a batch's input file: the live call's body, under `custom_id`. */
  line(customId: string, prompt: string): string;
  /** Uploads a JSONL file (purpose batch); its id. */
  upload(jsonl: Buffer, signal: AbortSignal): Promise<string>;
  create(fileId: string, signal: AbortSignal): Promise<BatchStatus>;
  get(batchId: string, signal: AbortSignal): Promise<BatchStatus>;
  /** The batch made from this input file, if any (a run stopped between creating it and journaling its id). */
  findByFile(fileId: string, signal: AbortSignal): Promise<BatchStatus | undefined>;
  /** A file's text (an output or error file: JSON lines). */
  content(fileId: string, signal: AbortSignal): Promise<string>;
  cancel(batchId: string, signal: AbortSignal): Promise<void>;
  /** What an error body says, on one line, with this target's key and header values redacted (see apiWords). */
  words(text: string): string;
  /** An error line's code, cleaned likewise (see apiCode). */
  code(value: unknown): string | undefined;
}

export const BATCH_STATES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;
export type BatchState = (typeof BATCH_STATES)[number];
/** A batch in one of these will not change any more: its files are read. */
export const FINAL_BATCH_STATES: ReadonlySet<BatchState> = new Set(['failed', 'completed', 'expired', 'cancelled']);

export interface BatchStatus {
  id: string;
  status: BatchState;
  inputFileId: string | undefined;
  outputFileId: string | undefined;
  errorFileId: string | undefined;
  counts: { total: number; completed: number; failed: number };
  /** A failed batch's reasons (validation), in the API's words, redacted and shortened. */
  errors: string[];
}

export const BATCH_LIMITS: BatchLimits = { maxRequests: 50_000, maxBytes: 200 * 1024 * 1024 };

// Output files of 50,000 long answers are large; beyond this a file is refused rather than held in memory.
const MAX_FILE_BYTES = 400 * 1024 * 1024;
const MAX_REPLY_BYTES = 4 * 1024 * 1024;
// A Batch API call that fails for a passing reason (a 5xx, a dropped connection, a 429) is tried again this way.
const API_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000, maxRetryAfterMs: 120_000 };
const CALL_DEADLINE_MS = 300_000;

export interface BatchApiParts {
  agent: HttpAgent;
  options: Pick<OpenAiTargetOptions, 'baseUrl' | 'model' | 'systemPrompt' | 'temperature' | 'maxTokens' | 'authHint'>;
  /** The live call's headers (the key among them): sent only to the base URL's origin, as for live calls. */
  headers: Record<string, string>;
  secrets: readonly string[];
}

/** The Batch API of the endpoint at `baseUrl` (every path below it: the key never goes anywhere else). */
export function createBatchApi(parts: BatchApiParts): BatchApi {
  const base = parts.options.baseUrl.replace(/\/+$/, '');
  const what = `The Batch API at ${new URL(base).origin}`;
  const call = (method: 'GET' | 'POST', path: string, signal: AbortSignal, body?: { data: string | Buffer; type: string }, maxBytes = MAX_REPLY_BYTES) =>
    batchRequest(parts, { method, url: `${base}${path}`, what, signal, maxBytes, ...(body ? { body } : {}) });
  return {
    line: (customId, prompt) => JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: chatBody(parts.options, prompt) }),
    async upload(jsonl, signal) {
      const boundary = `----eval-runner-${randomBytes(12).toString('hex')}`;
      const data = Buffer.concat([
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`),
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="eval-runner-batch.jsonl"\r\ncontent-type: application/jsonl\r\n\r\n`),
        jsonl,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const reply = await call('POST', '/files', signal, { data, type: `multipart/form-data; boundary=${boundary}` });
      return idOf(json(reply, what), what, 'file');
    },
    async create(fileId, signal) {
      const body = JSON.stringify({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
      return statusOf(json(await call('POST', '/batches', signal, { data: body, type: 'application/json' }), what), what, parts.secrets);
    },
    get: async (batchId, signal) => statusOf(json(await call('GET', `/batches/${encodeURIComponent(batchId)}`, signal), what), what, parts.secrets),
    async findByFile(fileId, signal) {
      const data = (json(await call('GET', '/batches?limit=100', signal), what) as { data?: unknown }).data;
      const list: unknown[] = Array.isArray(data) ? data : [];
      const found = list.find((b) => (b as { input_file_id?: unknown } | null)?.input_file_id === fileId);
      return found ? statusOf(found, what, parts.secrets) : undefined;
    },
    content: async (fileId, signal) => call('GET', `/files/${encodeURIComponent(fileId)}/content`, signal, undefined, MAX_FILE_BYTES),
    async cancel(batchId, signal) {
      await call('POST', `/batches/${encodeURIComponent(batchId)}/cancel`, signal);
    },
    words: (text) => apiWords(text, parts.secrets),
    code: (value) => apiCode(value, parts.secrets),
  };
}

interface BatchRequest {
  method: 'GET' | 'POST';
  url: string;
  what: string;
  signal: AbortSignal;
  maxBytes: number;
  body?: { data: string | Buffer; type: string };
}

/** One Batch API call, tried again for passing failures; its body's text, or a TargetError in the API's (redacted) words. */
async function batchRequest(parts: BatchApiParts, req: BatchRequest): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await batchRequestOnce(parts, req);
    } catch (error) {
      if (req.signal.aborted || !(error instanceof TargetError) || !error.retryable || attempt >= API_RETRY.maxAttempts) throw error;
      await sleep(error.details.retryAfterMs ?? backoffDelay(attempt, API_RETRY), req.signal);
    }
  }
}

async function batchRequestOnce(parts: BatchApiParts, req: BatchRequest): Promise<string> {
  const headers: Record<string, string> = { ...parts.headers, accept: 'application/json' };
  delete headers['content-type'];
  if (req.body) headers['content-type'] = req.body.type;
  let res;
  try {
    res = await httpRequest(parts.agent, req.url, { method: req.method, headers, signal: req.signal, maxBytes: req.maxBytes, deadlineMs: CALL_DEADLINE_MS, ...(req.body ? { body: req.body.data } : {}) });
  } catch (error) {
    if (req.signal.aborted) throw error;
    if (error instanceof BodyTooLargeError) throw new TargetError(`${req.what} answered with more than ${Math.round(req.maxBytes / 1048576)} MiB`, 'failed', { retryable: false, cause: 'answer too large' });
    const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
    throw new TargetError(`${req.what} could not be reached${code ? ` [${code}]` : ''}`, 'failed', { retryable: true, cause: 'unreachable' });
  }
  const text = res.body.toString('utf8');
  const status = res.statusCode;
  if (status >= 200 && status < 300) return text;
  const quoted = apiWords(text, parts.secrets);
  const hint = (status === 401 || status === 403) && parts.options.authHint ? ` ${parts.options.authHint}` : '';
  const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
  const retryable = status === 408 || status === 429 || status >= 500;
  throw new TargetError(`${req.what} answered HTTP ${status}: ${quoted}${hint}`, status === 429 ? 'rateLimited' : 'failed', { status, retryable, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}

/** What an error body says (error.message where it has one), redacted, on one line, at most 300 characters. */
export function apiWords(text: string, secrets: readonly string[]): string {
  let said = text;
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
    if (typeof message === 'string') said = message;
  } catch {
    // not JSON: quoted as it is
  }
  return providerText(said, secrets, 300) || '(empty body)';
}

/** An error line's `error.code` as a message may show it (see providerText), at most 60 characters; none if not a text. */
export function apiCode(code: unknown, secrets: readonly string[]): string | undefined {
  return typeof code === 'string' ? providerText(code, secrets, 60) || undefined : undefined;
}

// Control characters (a terminal's escapes among them), and the invisible ones that reorder or hide text.
const HOSTILE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]+/g;

/** Text a provider chose, as a message may show it: this target's secrets redacted, hostile characters out, one line, capped. */
function providerText(text: string, secrets: readonly string[], max: number): string {
  const flat = redactSecrets(text, secrets).replace(HOSTILE_CHARACTERS, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function json(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new TargetError(`${what} did not answer with JSON`, 'failed', { retryable: false, cause: 'not JSON' });
  }
}

const ID = /^[A-Za-z0-9_-]{1,200}$/;

function idOf(value: unknown, what: string, of: string): string {
  const id = (value as { id?: unknown })?.id;
  if (typeof id !== 'string' || !ID.test(id)) throw new TargetError(`${what} answered without a ${of} id`, 'failed', { retryable: false, cause: 'no id' });
  return id;
}

/** A batch object, checked: ids of a safe shape, a known status, counts as whole numbers. */
function statusOf(value: unknown, what: string, secrets: readonly string[]): BatchStatus {
  const v = (value ?? {}) as Record<string, unknown>;
  const status = BATCH_STATES.find((s) => s === v.status);
  if (!status) throw new TargetError(`${what} answered with a batch of unknown status`, 'failed', { retryable: false, cause: 'unknown status' });
  const fileId = (x: unknown) => (typeof x === 'string' && ID.test(x) ? x : undefined);
  const counts = (v.request_counts ?? {}) as Record<string, unknown>;
  const count = (x: unknown) => (typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : 0);
  const errorData = (v.errors as { data?: unknown } | null | undefined)?.data;
  const errors = Array.isArray(errorData) ? errorData.slice(0, 5).map((e) => apiWords(JSON.stringify({ error: e as unknown }), secrets)) : [];
  return {
    id: idOf(v, what, 'batch'),
    status,
    inputFileId: fileId(v.input_file_id),
    outputFileId: fileId(v.output_file_id),
    errorFileId: fileId(v.error_file_id),
    counts: { total: count(counts.total), completed: count(counts.completed), failed: count(counts.failed) },
    errors,
  };
}

/**
 * The Batch API side of an openai target with batch: true (undefined for any other): the engine sends its traces
 * in batches, and its live target only for --batch-fallback live. The key goes only to the base URL's origin.
 */
export function createBatchTarget(spec: TargetSpec, secrets: TargetSecrets, options: TargetOptions): BatchTarget | undefined {
  if (spec.type !== 'openai') return undefined;
  if (spec.batchFallback !== undefined && (!spec.batch || !['batch', 'live'].includes(spec.batchFallback))) {
    throw new TypeError('batchFallback (--batch-fallback) is batch or live, and goes with batch (--batch).');
  }
  if (!spec.batch) return undefined;
  if (spec.stream) throw new TypeError('A batch is not streamed: leave out stream (--stream) with batch (--batch).');
  const headers = openAiHeaders({ apiKey: secrets.apiKey, ...(secrets.headers ? { headers: secrets.headers } : {}) });
  const agent = createTargetAgent(Math.min(8, options.connections), targetProxy(options.proxy));
  return createOpenAiBatch(
    { agent, options: { ...spec, ...(options.authHint ? { authHint: options.authHint } : {}) }, headers, secrets: targetSecrets(headers, spec.baseUrl) },
    { fallback: spec.batchFallback, limits: options.batch?.limits, pollMs: options.batch?.pollMs },
  );
}

/** The openai target with batch: true: its Batch API, and how a run uses it. */
export interface BatchTarget {
  api: BatchApi;
  model: string;
  /** Where requests whose batch failed them for a passing reason go: a new batch, or live calls. */
  fallback: 'batch' | 'live';
  limits: BatchLimits;
  /** The first pause between polls of a batch; each later one is longer, up to maxPollMs. */
  pollMs: number;
  maxPollMs: number;
  close(): Promise<void>;
}

export interface BatchTargetOptions {
  fallback?: 'batch' | 'live' | undefined;
  limits?: BatchLimits | undefined;
  pollMs?: number | undefined;
}

/** The Batch API of an openai target, with the live call's headers and body (see chatBody). */
export function createOpenAiBatch(parts: BatchApiParts, options: BatchTargetOptions): BatchTarget {
  const pollMs = options.pollMs ?? 1000;
  return {
    api: createBatchApi(parts),
    model: parts.options.model,
    fallback: options.fallback ?? 'batch',
    limits: options.limits ?? BATCH_LIMITS,
    pollMs,
    maxPollMs: Math.max(pollMs, 60_000),
    close: () => parts.agent.close(),
  };
}
