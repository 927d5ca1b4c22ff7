import { BodyTooLargeError, createHttpAgent, httpRequest } from '../../api/http';
import type { HttpAgent } from '../../api/http';
import { redact } from '../../api/errors';
import { parseRetryAfter } from '../../api/retry';
import { QUOTA_PATTERN, TargetError, withDeadline } from './target';
import type { TargetCallOptions } from './target';

export interface TargetHttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * One agent per target. Header and body time-outs are off at the undici level: the per-call deadline
 * governs, because slow non-streaming model answers can take longer than undici's default 300 s.
 */
export function createTargetAgent(connections: number): HttpAgent {
  return createHttpAgent({ connections, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 });
}

const MAX_TARGET_RESPONSE = 64 * 1024 * 1024;

/** Sends one request to a model endpoint and returns its parsed JSON, mapping failures to TargetError. */
export async function targetRequest(agent: HttpAgent, req: TargetHttpRequest, what: string, options: TargetCallOptions): Promise<unknown> {
  return withDeadline(options, what, async (signal) => {
    let res;
    try {
      res = await httpRequest(agent, req.url, {
        method: req.method as 'POST',
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        signal,
        maxBytes: MAX_TARGET_RESPONSE,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof BodyTooLargeError) throw new TargetError(`${what} answered with more than 64 MiB`, 'failed', { retryable: false });
      const code = (error as { code?: string }).code;
      throw new TargetError(`${what} could not be reached${code ? ` [${code}]` : ''}`, 'failed', { retryable: true });
    }
    const raw = res.body.toString('utf8');
    const status = res.statusCode;
    // Error snippets quote the endpoint's words, and endpoints echo keys ("invalid key sk-…"): never ours.
    const text = status >= 200 && status < 300 ? raw : redactAll(raw, secretsOf(req.headers));
    if (status === 429) {
      const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      throw new TargetError(`${what} is rate-limiting (HTTP 429): ${snippet(text)}`, 'rateLimited', {
        status,
        quota: QUOTA_PATTERN.test(text),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    if (status < 200 || status >= 300) {
      const retryable = status === 408 || status >= 500;
      throw new TargetError(`${what} answered HTTP ${status}: ${snippet(text)}`, 'failed', { status, retryable });
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new TargetError(`${what} did not answer with JSON: ${snippet(text)}`, 'failed', { status, retryable: false });
    }
  });
}

const PLAIN_HEADERS = new Set(['content-type', 'accept', 'user-agent', 'content-length']);

/** Header values that may be credentials (any but the plain ones), with and without their scheme. */
function secretsOf(headers: Record<string, string>): string[] {
  return Object.entries(headers)
    .filter(([name]) => !PLAIN_HEADERS.has(name.toLowerCase()))
    .flatMap(([, value]) => [value, value.replace(/^(Bearer|Basic|Token)\s+/i, '')])
    .filter((value) => value.length >= 8);
}

function redactAll(text: string, secrets: string[]): string {
  return secrets.reduce((t, secret) => redact(t, secret), text);
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat || '(empty body)';
}

/** Reads a dotted path such as choices.0.message.content out of parsed JSON. */
export function pickPath(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const part of path.split('.').filter(Boolean)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
