// The sandbox's Batch API, OpenAI's endpoints over the echo model: files (upload, content), batches (create, get, list,
// cancel). A batch moves through validating, in_progress and finalizing over `batchDelayMs`, as seen by whoever asks;
// its output file lists the answers shuffled (the real API keeps no order either). Test hooks fail lines or expire it.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { echoCompletion, lastUserMessage } from './echoModel';
import { parseForm, readBody, sendJson } from './httpIo';
import type { Reply } from './httpIo';
import type { SandboxOptions } from './options';

interface StoredFile {
  id: string;
  purpose: string;
  filename: string;
  content: string;
  createdAt: number;
}

interface Batch {
  id: string;
  /** 1-based, in creation order (the test hooks name batches by it). */
  number: number;
  inputFileId: string;
  requests: Array<{ customId: string; body: unknown }>;
  createdAt: number;
  /** A validation failure: the batch is failed from the start. */
  errors: Array<{ code: string; message: string; line?: number }>;
  cancelledAt?: number;
  /** Once ended: its final status and files. */
  ended?: { status: 'completed' | 'expired' | 'cancelled' | 'failed'; outputFileId?: string; errorFileId?: string; completed: number; failed: number };
}

// Uploads of a whole batch file (the API takes up to 200 MB).
const MAX_UPLOAD_BYTES = 210 * 1024 * 1024;
const DEFAULT_BATCH_DELAY_MS = 2000;

/** The Batch API's paths (the files and batches endpoints). */
export function isBatchApiPath(path: string): boolean {
  return path === '/v1/files' || path.startsWith('/v1/files/') || path === '/v1/batches' || path.startsWith('/v1/batches/');
}

export class SandboxBatches {
  private readonly files = new Map<string, StoredFile>();
  private readonly batches = new Map<string, Batch>();

  constructor(private readonly options: SandboxOptions) {}

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (method === 'GET' && content) return this.sendContent(res, decodeURIComponent(content[1]!));
    sendJson(res, await this.reply(method, path, req));
  }

  private async reply(method: string, path: string, req: IncomingMessage): Promise<Reply> {
    const batch = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (method === 'POST' && path === '/v1/files') return this.upload(req);
    if (method === 'POST' && path === '/v1/batches') return this.create(req);
    if (method === 'GET' && path === '/v1/batches') return { status: 200, body: { object: 'list', data: [...this.batches.values()].reverse().map((b) => this.view(b)), has_more: false } };
    if (batch) {
      const found = this.batches.get(decodeURIComponent(batch[1]!));
      if (!found) return apiError(404, `No batch found with id '${batch[1]}'.`);
      if (method === 'GET' && !batch[2]) return { status: 200, body: this.view(found) };
      if (method === 'POST' && batch[2]) {
        if (!found.ended && found.cancelledAt === undefined) found.cancelledAt = Date.now();
        return { status: 200, body: this.view(found) };
      }
    }
    return apiError(404, `Unknown endpoint ${method} ${path}.`);
  }

  private async upload(req: IncomingMessage): Promise<Reply> {
    const body = await readBody(req, MAX_UPLOAD_BYTES);
    if (body === 'tooLarge') return apiError(413, 'The file is larger than 200 MB.');
    const form = parseForm(req.headers['content-type'] ?? '', body);
    if (typeof form === 'string') return apiError(400, 'Expected multipart/form-data with the fields purpose and file.');
    const purpose = form.get('purpose');
    const content = form.get('file');
    if (purpose !== 'batch' || content === undefined) return apiError(400, "Expected purpose 'batch' and a file.");
    const file: StoredFile = { id: newId('file'), purpose, filename: 'upload.jsonl', content, createdAt: Date.now() };
    this.files.set(file.id, file);
    return { status: 200, body: fileView(file) };
  }

  private async create(req: IncomingMessage): Promise<Reply> {
    const body = await readBody(req, 1024 * 1024);
    let parsed: { input_file_id?: unknown; endpoint?: unknown; completion_window?: unknown };
    try {
      parsed = JSON.parse(body === 'tooLarge' ? '' : body.toString('utf8')) as typeof parsed;
    } catch {
      return apiError(400, 'The body must be JSON.');
    }
    const file = typeof parsed.input_file_id === 'string' ? this.files.get(parsed.input_file_id) : undefined;
    if (!file || file.purpose !== 'batch') return apiError(400, `No file with id '${String(parsed.input_file_id)}' and purpose batch.`);
    if (parsed.endpoint !== '/v1/chat/completions' || parsed.completion_window !== '24h') return apiError(400, "endpoint must be '/v1/chat/completions' and completion_window '24h'.");
    const batch: Batch = { id: newId('batch'), number: this.batches.size + 1, inputFileId: file.id, requests: [], createdAt: Date.now(), errors: [] };
    readRequests(file.content, batch);
    this.batches.set(batch.id, batch);
    return { status: 200, body: this.view(batch) };
  }

  private sendContent(res: ServerResponse, id: string): void {
    const file = this.files.get(id);
    if (!file) return sendJson(res, apiError(404, `No file found with id '${id}'.`));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': Buffer.byteLength(file.content) });
    res.end(file.content);
  }

  /** The batch as the API shows it now (ending it, and writing its files, once its time has come). */
  private view(batch: Batch): unknown {
    const now = Date.now();
    const delayMs = this.options.batchDelayMs ?? DEFAULT_BATCH_DELAY_MS;
    const elapsed = now - batch.createdAt;
    const total = batch.requests.length;
    if (!batch.ended) {
      if (batch.errors.length) batch.ended = { status: 'failed', completed: 0, failed: 0 };
      else if (batch.cancelledAt !== undefined && now - batch.cancelledAt >= delayMs / 10) this.end(batch, 'cancelled', done(batch.cancelledAt - batch.createdAt, delayMs, total));
      else if (batch.cancelledAt === undefined && elapsed >= delayMs) {
        const expireAfter = this.options.batchFaults?.expire?.(batch.number);
        this.end(batch, expireAfter === undefined ? 'completed' : 'expired', expireAfter === undefined ? total : Math.min(total, expireAfter));
      }
    }
    const status = batch.ended?.status ?? (batch.cancelledAt !== undefined ? 'cancelling' : elapsed < delayMs / 10 ? 'validating' : elapsed < (delayMs * 9) / 10 ? 'in_progress' : 'finalizing');
    const completed = batch.ended?.completed ?? (status === 'in_progress' || status === 'finalizing' ? done(elapsed, delayMs, total) : 0);
    return {
      id: batch.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors: batch.errors.length ? { object: 'list', data: batch.errors } : null,
      input_file_id: batch.inputFileId,
      completion_window: '24h',
      status,
      output_file_id: batch.ended?.outputFileId ?? null,
      error_file_id: batch.ended?.errorFileId ?? null,
      created_at: Math.floor(batch.createdAt / 1000),
      request_counts: { total, completed, failed: batch.ended?.failed ?? 0 },
      metadata: null,
    };
  }

  /** Ends a batch: its first `answered` requests answered (or failed by the hook), the rest unfinished; files shuffled. */
  private end(batch: Batch, status: 'completed' | 'expired' | 'cancelled', answered: number): void {
    const output: string[] = [];
    const errors: string[] = [];
    batch.requests.forEach((request, i) => {
      const id = `batch_req_${randomBytes(8).toString('hex')}`;
      if (i >= answered) {
        const code = status === 'cancelled' ? 'batch_cancelled' : 'batch_expired';
        errors.push(JSON.stringify({ id, custom_id: request.customId, response: null, error: { code, message: `This request could not be executed before the batch was ${status === 'cancelled' ? 'cancelled' : 'expired'}.` } }));
        return;
      }
      const fault = this.options.batchFaults?.line?.(lastUserMessage(request.body), batch.number);
      if (fault && 'code' in fault) {
        errors.push(JSON.stringify({ id, custom_id: request.customId, response: null, error: { code: fault.code, message: fault.message } }));
        return;
      }
      if (fault) {
        const body = { error: { message: fault.message, type: fault.status >= 500 ? 'server_error' : 'invalid_request_error', code: null } };
        errors.push(JSON.stringify({ id, custom_id: request.customId, response: { status_code: fault.status, request_id: id, body }, error: null }));
        return;
      }
      output.push(JSON.stringify({ id, custom_id: request.customId, response: { status_code: 200, request_id: id, body: echoCompletion(lastUserMessage(request.body)) }, error: null }));
    });
    const file = (lines: string[]) => {
      if (lines.length === 0) return undefined;
      const stored: StoredFile = { id: newId('file'), purpose: 'batch_output', filename: 'output.jsonl', content: `${shuffled(lines).join('\n')}\n`, createdAt: Date.now() };
      this.files.set(stored.id, stored);
      return stored.id;
    };
    const outputFileId = file(output);
    const errorFileId = file(errors);
    batch.ended = { status, completed: output.length, failed: errors.length, ...(outputFileId ? { outputFileId } : {}), ...(errorFileId ? { errorFileId } : {}) };
  }
}

/** The input file's lines as requests; a line that is not a chat request fails the batch's validation, as the API does. */
function readRequests(content: string, batch: Batch): void {
  const seen = new Set<string>();
  content.split('\n').forEach((text, i) => {
    if (!text.trim()) return;
    let line: { custom_id?: unknown; method?: unknown; url?: unknown; body?: unknown };
    try {
      line = JSON.parse(text) as typeof line;
    } catch {
      batch.errors.push({ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', line: i + 1 });
      return;
    }
    if (typeof line.custom_id !== 'string' || seen.has(line.custom_id) || line.method !== 'POST' || line.url !== '/v1/chat/completions' || typeof line.body !== 'object') {
      batch.errors.push({ code: 'invalid_request', message: 'Each line needs a unique custom_id, method POST, url /v1/chat/completions and a body.', line: i + 1 });
      return;
    }
    seen.add(line.custom_id);
    batch.requests.push({ customId: line.custom_id, body: line.body });
  });
  if (batch.requests.length === 0 && batch.errors.length === 0) batch.errors.push({ code: 'empty_file', message: 'The file holds no requests.' });
}

/** Requests done `elapsed` ms into a batch's in-progress time. */
function done(elapsed: number, delayMs: number, total: number): number {
  const fraction = Math.min(1, Math.max(0, (elapsed - delayMs / 10) / ((delayMs * 8) / 10)));
  return Math.floor(fraction * total);
}

/** The lines in a random order, never the order given (two or more). */
function shuffled(lines: string[]): string[] {
  const out = [...lines];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  if (out.length > 1 && out.every((line, i) => line === lines[i])) out.reverse();
  return out;
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

function fileView(file: StoredFile): unknown {
  return { id: file.id, object: 'file', bytes: Buffer.byteLength(file.content), created_at: Math.floor(file.createdAt / 1000), filename: file.filename, purpose: file.purpose };
}

function apiError(status: number, message: string): Reply {
  return { status, body: { error: { message, type: 'invalid_request_error', param: null, code: null } } };
}
