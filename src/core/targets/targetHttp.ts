import { BodyTooLargeError, createHttpAgent, httpRequest } from '../../api/http';
import type { HttpAgent } from '../../api/http';
import { checkProxyConfig, failedAtProxy, proxyFailure, proxyFromEnv } from '../../api/proxy';
import type { ProxyConfig } from '../../api/proxy';
import { parseRetryAfter } from '../../api/retry';
import { QUOTA_PATTERN, TargetError, withDeadline } from './target';
import type { TargetCallOptions } from './target';
import { redactSecrets } from './targetSecrets';
import { parseRateHeaders } from './rateHeaders';
import { SseReader, isEventStream } from './sse';

export interface TargetHttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Header and query values to redact from everything the endpoint says (see targetSecrets). */
  secrets: readonly string[];
  /** Added to the message of a 401 or 403: how to give this target the right credential. */
  authHint?: string;
  /** The proxy the request goes through (shown without credentials), named when the connection fails. */
  via?: string;
}

/** The target's proxy: the one given; undefined: the environment's (HTTPS_PROXY, HTTP_PROXY, NO_PROXY); null: none. */
export function targetProxy(proxy: ProxyConfig | null | undefined): ProxyConfig | undefined {
  const config = proxy === undefined ? proxyFromEnv() : proxy ?? undefined;
  checkProxyConfig(config);
  return config;
}

/**
 * One agent per target. Header and body time-outs are off at the undici level: the per-call deadline
 * governs, because slow non-streaming model answers can take longer than undici's default 300 s.
 */
export function createTargetAgent(connections: number, proxy?: ProxyConfig): HttpAgent {
  return createHttpAgent({ connections, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 }, proxy);
}

const MAX_TARGET_RESPONSE = 64 * 1024 * 1024;

/** A streamed answer: each event's data as it arrives (the stream's pieces, read by the target). */
export const STREAMED = Symbol('streamed');

/**
 * Sends one request to a model endpoint and returns its parsed JSON, mapping failures to TargetError. With
 * `onEvent`, a text/event-stream answer is read as it arrives (each event's data to onEvent) and STREAMED is
 * returned; an endpoint that answers JSON all the same gets its JSON returned.
 */
export async function targetRequest(
  agent: HttpAgent,
  req: TargetHttpRequest,
  what: string,
  options: TargetCallOptions,
  onEvent?: (data: string) => void,
): Promise<unknown> {
  return withDeadline(options, what, async (signal) => {
    let res;
    let reader: SseReader | undefined;
    try {
      res = await httpRequest(agent, req.url, {
        method: req.method,
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        signal,
        maxBytes: MAX_TARGET_RESPONSE,
        ...(onEvent
          ? {
              onChunk: (chunk: Buffer) => {
                reader ??= new SseReader(onEvent);
                reader.push(chunk);
              },
            }
          : {}),
      });
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof BodyTooLargeError) {
        throw new TargetError(`${what} answered with more than 64 MiB`, 'failed', { retryable: false, cause: 'answer too large' });
      }
      const code = (error as { code?: string; cause?: { code?: string } }).code ?? (error as { cause?: { code?: string } }).cause?.code;
      const through = req.via && failedAtProxy(error, code) ? `: ${proxyFailure(error, req.via).message}` : '';
      throw new TargetError(`${what} could not be reached${through}${code ? ` [${code}]` : ''}`, 'failed', { retryable: true, cause: 'unreachable' });
    }
    const status = res.statusCode;
    const rateInfo = parseRateHeaders(res.headers);
    if (rateInfo) options.onRateInfo?.(rateInfo);
    // Endpoints echo keys, headers and URLs ("invalid key sk-…"), in error pages and in 200s that are not JSON
    // alike: whatever they say is redacted before any of it can be quoted.
    // (An answer parsed from valid JSON is the model's, kept as it is; only quoted text is redacted.)
    const raw = res.body.toString('utf8');
    const quoted = () => snippet(redactSecrets(raw, req.secrets));
    if (status === 429) {
      const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      throw new TargetError(`${what} is rate-limiting (HTTP 429): ${quoted()}`, 'rateLimited', {
        status,
        quota: QUOTA_PATTERN.test(raw),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    if (status < 200 || status >= 300) {
      const retryable = status === 408 || status >= 500;
      const hint = (status === 401 || status === 403) && req.authHint ? ` ${req.authHint}` : '';
      throw new TargetError(`${what} answered HTTP ${status}: ${quoted()}${hint}`, 'failed', { status, retryable });
    }
    if (onEvent && isEventStream(res.headers['content-type'])) {
      reader?.end();
      return STREAMED;
    }
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw new TargetError(`${what} did not answer with JSON: ${quoted()}`, 'failed', { retryable: false, cause: 'not JSON' });
    }
  });
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

/**
 * Gathers a streamed answer: each event's JSON gives a piece (the concatenation is the answer) and, in the
 * last event that has one, the usage. The first non-empty piece is the time to first token.
 */
export class StreamedAnswer {
  private readonly pieces: string[] = [];
  usage: unknown;
  events = 0;
  private readonly started = performance.now();
  private timed = false;

  constructor(
    private readonly call: TargetCallOptions,
    private readonly piece: (event: unknown) => unknown,
    private readonly usageOf: (event: unknown) => unknown,
  ) {}

  readonly onEvent = (data: string): void => {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return; // a keep-alive or a vendor's own line: not a piece
    }
    this.events++;
    const text = this.piece(event);
    if (typeof text === 'string' && text !== '') {
      if (!this.timed) {
        this.timed = true;
        this.call.onFirstToken?.(Math.round(performance.now() - this.started));
      }
      this.pieces.push(text);
    }
    const usage = this.usageOf(event);
    if (usage !== undefined && usage !== null) this.usage = usage;
  };

  get text(): string {
    return this.pieces.join('');
  }
}
