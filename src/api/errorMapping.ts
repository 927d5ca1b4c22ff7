// What the service's answers and the transport's failures mean, as ApiErrors with a reason and a hint: the one
// place that maps HTTP statuses, envelopes and socket errors to the user's words (beside errors.ts, their shape).
import { ApiError, AuthError, NotReadyError, isAbortError, redact, truncate } from './errors';
import type { ApiErrorInit, ApiErrorReason } from './errors';
import type { HttpHeaders } from './http';
import { failedAtProxy, proxyFailure } from './proxy';
import { parseRetryAfter } from './retry';
import { describeIssue, envelopeSchema, envelopeText } from './schemas';
import type { Envelope } from './schemas';

export type Method = 'GET' | 'POST';

/** One HTTP answer as the transport read it. */
export interface RawResponse {
  status: number;
  headers: HttpHeaders;
  text: string;
}

// Codes meaning the request never got an answer because the connection itself failed.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const NOT_READY_STATUSES = new Set([409, 423, 425, 503]);

function requestCodeOf(code: string | undefined, token: string): string | undefined {
  return code === undefined ? undefined : truncate(redact(code, token), 100);
}

export function isRetryable(method: Method, error: ApiError): boolean {
  if (error.reason === 'network') return method === 'GET' || error.connectionFailed;
  if (error.status === undefined) return method === 'GET' && error.reason === 'timeout';
  const s = error.status;
  if (method === 'GET') return s === 408 || s === 429 || (s >= 500 && s <= 599);
  return s === 429 || s === 502 || s === 503 || s === 504;
}

export function isNotReadySignal(error: ApiError): boolean {
  if (error.reason === 'rejected' && error.status !== undefined && error.status >= 200 && error.status < 300) return true;
  return error.status !== undefined && NOT_READY_STATUSES.has(error.status);
}

/** While waiting for generation, passing trouble is waited out too; a wrong token or evaluation is not. */
export function isWaitable(error: ApiError): boolean {
  if (error instanceof NotReadyError) return true;
  return error.reason === 'network' || error.reason === 'timeout' || error.reason === 'server' || error.reason === 'rateLimited';
}

export function errorInit(error: ApiError, reason: ApiErrorInit['reason']): ApiErrorInit {
  return {
    reason,
    operation: error.operation,
    status: error.status,
    serviceMessage: error.serviceMessage,
    requestCode: error.requestCode,
    retryAfterMs: error.retryAfterMs,
  };
}

export function transportError(error: unknown, operation: string, timedOut: boolean, origin: string, via?: string): ApiError {
  const code = transportCode(error);
  // Through a proxy, a failed connection is the proxy's to explain: say so, not "the service is down".
  if (via && !timedOut && failedAtProxy(error, code)) {
    const failure = proxyFailure(error, via);
    return new ApiError(
      `Could not reach the service at ${origin}: ${failure.message}${code ? ` [${code}]` : ''}`,
      'Check the proxy (HTTPS_PROXY / HTTP_PROXY, or VS Code\'s http.proxy) and whether this host belongs in NO_PROXY (http.noProxy).',
      { reason: 'network', operation, transportCode: code, connectionFailed: true },
    );
  }
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new ApiError(
      'The service did not answer in time',
      'The service may be overloaded or the network slow; try again, or raise the request time-out.',
      { reason: 'timeout', operation, transportCode: code },
    );
  }
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'HTTPParserError' || code === 'UND_ERR_HEADERS_OVERFLOW') {
    const detail = name === 'HTTPParserError' ? ((error as Error).message.match(/\(([^)]+)\)$/)?.[1] ?? 'unparsable') : 'headers too large';
    return new ApiError(
      `The service's reply is not valid HTTP (${detail})`,
      'Check that the base URL points at the service API over http(s), not at another kind of server or a broken proxy.',
      { reason: 'format', operation, transportCode: code ?? name },
    );
  }
  const connectionFailed = code !== undefined && CONNECTION_CODES.has(code);
  if (code === 'UND_ERR_SOCKET' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code === 'ECONNRESET') {
    return new ApiError(
      `The service at ${origin} closed the connection before its answer was complete [${code}]`,
      'The service or a proxy may be restarting or overloaded; try again shortly.',
      { reason: 'network', operation, transportCode: code, connectionFailed },
    );
  }
  return new ApiError(
    `Could not reach the service at ${origin}${code ? ` [${code}]` : ''}`,
    'Check the base URL and your network connection, then try again.',
    { reason: 'network', operation, transportCode: code, connectionFailed },
  );
}

function transportCode(error: unknown): string | undefined {
  if (isAbortError(error)) return 'ABORTED';
  const e = error as { code?: unknown; cause?: { code?: unknown }; errors?: Array<{ code?: unknown }> } | undefined;
  const code = e?.code ?? e?.cause?.code ?? e?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The envelope of a successful answer, or the ApiError that says what the answer means. */
export function interpret(raw: RawResponse, operation: string, token: string): Envelope {
  let parsed: unknown;
  let parseFailure: string | undefined;
  const trimmed = raw.text.trim();
  if (trimmed === '') parseFailure = 'an empty body';
  else {
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parseFailure = parseFailureWords(trimmed, raw.headers);
    }
  }
  const envelopeResult = parsed === undefined ? undefined : plainEnvelope(parsed) ?? envelopeSchema.safeParse(parsed);
  const envelope = envelopeResult?.success ? envelopeResult.data : undefined;
  const loose = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  const facts = judgeAnswer(
    {
      status: raw.status,
      headers: raw.headers,
      parseFailure,
      code: loose?.code,
      message: loose?.message,
      shapeIssue: envelopeResult && !envelopeResult.success ? describeIssue(envelopeResult.error) : undefined,
      success: envelope?.success,
    },
    operation,
    token,
  );
  // Everything but the prompt list goes on into logs, the journal and messages: the redacted words only.
  return { data: envelope!.data, success: true, code: facts.requestCode, message: facts.serviceMessage ?? null };
}

/**
 * An envelope the schema would take, taken without it: an object whose `success` is a boolean (the schema holds
 * nothing else to the spec). Every submission's answer is one; zod's parse of it cost a 20,000-trace run some 40 ms
 * of CPU (issue 36). Anything else goes through the schema, which says what is wrong.
 */
export function plainEnvelope(parsed: unknown): { success: true; data: { code: unknown; message: unknown; data: unknown; success: boolean } } | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { code, message, data, success } = parsed as Record<string, unknown>;
  return typeof success === 'boolean' ? { success: true, data: { code, message, data, success } } : undefined;
}

/** What a body that is not JSON is, in the user's words (its text trimmed, or its first bytes). */
export function parseFailureWords(trimmedText: string, headers: HttpHeaders): string {
  return /^<(!doctype|html|head|body|\?xml|[a-z])/i.test(trimmedText) ? 'an HTML page instead of JSON' : unexpectedBody(headers) ?? 'truncated or invalid JSON';
}

/** One answer as read: whole (interpret) or as it streamed in (the prompt list). */
export interface AnswerFacts {
  status: number;
  headers: HttpHeaders;
  /** The body is not JSON: why, in words. */
  parseFailure: string | undefined;
  /** The envelope's code and message as sent (anything; only text is used). */
  code: unknown;
  message: unknown;
  /** What is wrong with the envelope's shape (`success: expected boolean`), when it is JSON. */
  shapeIssue: string | undefined;
  success: boolean | undefined;
}

/**
 * The facts of a successful envelope (the service's words redacted), or the ApiError the answer means: a status
 * first, then a body that is not JSON, then an envelope of the wrong shape, then success: false.
 */
export function judgeAnswer(answer: AnswerFacts, operation: string, token: string): Omit<ApiErrorInit, 'reason'> {
  const rawMessage = envelopeText(answer.message);
  const facts = {
    operation,
    status: answer.status,
    serviceMessage: rawMessage ? redact(rawMessage, token) : undefined,
    // The code is the service's words too: a hostile service can echo the token there as well as in the message.
    requestCode: requestCodeOf(envelopeText(answer.code), token),
    retryAfterMs: parseRetryAfter(answer.headers['retry-after']),
  };
  if (answer.status < 200 || answer.status >= 300) throw statusError(facts);
  if (answer.parseFailure) {
    throw new ApiError(
      `The service answered with ${answer.parseFailure}`,
      'Check that the base URL points at the service API (a proxy, captive portal or login page may be in the way).',
      { ...facts, reason: 'format' },
    );
  }
  if (answer.shapeIssue !== undefined || answer.success === undefined) {
    throw new ApiError(
      `The service's answer is not the expected envelope {code, message, data, success} (${answer.shapeIssue ?? 'success: expected boolean'})`,
      'Check that the base URL points at the service API; report this with the request code if it does.',
      { ...facts, reason: 'format' },
    );
  }
  if (!answer.success) {
    throw new ApiError(
      'The service reported a failure',
      'Read the service message above; fix the request or try again later.',
      { ...facts, reason: 'rejected' },
    );
  }
  return facts;
}

/** Names a body that could never be JSON by its headers: compressed unasked, or of another media type. */
function unexpectedBody(headers: HttpHeaders): string | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim();
  const encoding = first(headers['content-encoding']);
  if (encoding && encoding.toLowerCase() !== 'identity') return `a ${truncate(encoding, 40)}-compressed body the client did not ask for`;
  const type = first(headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
  if (type && !/json|^text\/|^$/.test(type)) return `a ${truncate(type, 60)} body instead of JSON`;
  return undefined;
}

/** What an HTTP status means to the user, and what to do: the first that matches (401 and 403 are the token's). */
const STATUS_WORDS: ReadonlyArray<[matches: (status: number) => boolean, message: string, next: string, reason: ApiErrorReason]> = [
  [(s) => s === 404, 'The service found no such evaluation, trace or route', 'Check the base URL, the evaluation id and its kind (benchmark or robustness).', 'notFound'],
  [(s) => s === 400 || s === 422, 'The service refused the request as invalid', 'Check the evaluation id, kind and trace id.', 'badRequest'],
  [(s) => s === 413, 'The service refused the request as too large', 'The answer is longer than the service accepts; shorten it.', 'tooLarge'],
  [(s) => s === 408, 'The service timed out waiting for the request', 'Try again; check your network if it keeps happening.', 'timeout'],
  [(s) => s === 429, 'The service is limiting the request rate', 'Wait a little and try again, or lower the concurrency.', 'rateLimited'],
  [(s) => s >= 500, 'The service failed to handle the request', 'This is on the service side; try again in a few minutes.', 'server'],
  [(s) => s >= 300 && s < 400, 'The service answered with a redirect the client does not follow', 'Set the base URL to the address the service redirects to.', 'redirect'],
];

function statusError(facts: Omit<ApiErrorInit, 'reason'> & { status: number }): ApiError {
  const s = facts.status;
  if (s === 401 || s === 403) {
    return new AuthError(
      s === 401 ? 'The service rejected the personal access token' : 'The personal access token is not allowed to do this',
      'Set a valid personal access token and try again.',
      { ...facts, reason: 'auth' },
    );
  }
  const known = STATUS_WORDS.find(([matches]) => matches(s));
  if (known) {
    const [, message, next, reason] = known;
    return new ApiError(message, next, { ...facts, reason });
  }
  return new ApiError('The service refused the request', 'Read the service message; check the evaluation id, kind and token.', {
    ...facts,
    reason: 'rejected',
  });
}
