/**
 * Every failure of the API module is an ApiError (or a subclass) whose message is one plain sentence a user
 * can act on. Fields carry the facts (status, the service's own message and request code) for logs and UIs.
 * No field ever holds the token: service messages are redacted and raw transport errors are not attached.
 */
export type ApiErrorReason =
  | 'auth'
  | 'notFound'
  | 'badRequest'
  | 'tooLarge'
  | 'rateLimited'
  | 'server'
  | 'rejected'
  | 'network'
  | 'timeout'
  | 'format'
  | 'redirect'
  | 'notReady';

export interface ApiErrorInit {
  reason: ApiErrorReason;
  /** What was being done, e.g. "listing the benchmark prompts of evaluation 7". */
  operation: string;
  status?: number;
  serviceMessage?: string;
  requestCode?: string;
  retryAfterMs?: number;
  /** Low-level code of a transport failure (ECONNREFUSED, UND_ERR_SOCKET...). */
  transportCode?: string;
  /** True when the request never reached the service (safe to retry even a POST). */
  connectionFailed?: boolean;
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly reason: ApiErrorReason;
  readonly operation: string;
  readonly status: number | undefined;
  readonly serviceMessage: string | undefined;
  readonly requestCode: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly transportCode: string | undefined;
  readonly connectionFailed: boolean;
  /** The sentence telling the user what to do next. */
  readonly hint: string;

  constructor(summary: string, hint: string, init: ApiErrorInit) {
    super(composeMessage(summary, hint, init));
    this.reason = init.reason;
    this.operation = init.operation;
    this.status = init.status;
    this.serviceMessage = init.serviceMessage;
    this.requestCode = init.requestCode;
    this.retryAfterMs = init.retryAfterMs;
    this.transportCode = init.transportCode;
    this.connectionFailed = init.connectionFailed ?? false;
    this.hint = hint;
  }
}

/** The service rejected the personal access token (HTTP 401 or 403). */
export class AuthError extends ApiError {
  override name = 'AuthError';
}

/** The robustness prompts are not generated yet (or did not come within the caller's time limit). */
export class NotReadyError extends ApiError {
  override name = 'NotReadyError';
}

function composeMessage(summary: string, hint: string, init: ApiErrorInit): string {
  const facts: string[] = [];
  if (init.status !== undefined) facts.push(`HTTP ${init.status}`);
  if (init.requestCode) facts.push(init.requestCode);
  let text = `${summary} while ${init.operation}`;
  if (facts.length) text += ` (${facts.join(', ')})`;
  if (init.serviceMessage) text += `: the service said "${truncate(init.serviceMessage, 300)}"`;
  return `${text}. ${hint}`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Removes every occurrence of a secret from text that may end up in a message or a log. */
export function redact(text: string, secret: string | undefined): string {
  // Searched before it is split: every answer's message and code pass here, and an array and a new string per answer
  // for a secret that is almost never there (--cpu-prof: 43 ms of a 20,000-trace run).
  if (!secret || secret.length < 4 || !text.includes(secret)) return text;
  return text.split(secret).join('[redacted]');
}

/** Why a signal aborted, as an Error (a reason given as anything else becomes an AbortError). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('The call was cancelled.', 'AbortError');
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || (error as { code?: string }).code === 'ABORT_ERR');
}
