import type { RateInfo } from './rateHeaders';

/** What every target adapter implements: one prompt in, one answer out, or a TargetError. */
export interface Target {
  /** Short description for logs and the journal, never holding a secret. */
  readonly description: string;
  /**
   * A process on this machine (a command, a worker), not a hosted endpoint: no rate limit to fear, so calls
   * start at once instead of spread over the second a hosted model's first answer is assumed to take.
   */
  readonly local?: boolean;
  /**
   * Gathers prompts into batches (a batch function): its calls are not paced, since starts spread over time would
   * reach it one by one and leave its batches part-empty; the run's concurrency still bounds them.
   */
  readonly gathersBatches?: boolean;
  send(prompt: string, options: TargetCallOptions): Promise<string>;
  /**
   * Gets ready before the first prompt (long-lived workers start and load the user's module once), so that
   * start-up is neither counted as a call's latency nor paid by the first traces; rejects with a TargetError
   * when the target cannot be set up at all.
   */
  warmUp?(signal: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}

export interface TargetCallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** Told what the endpoint's rate-limit headers say, on every answer that has them (429s included). */
  onRateInfo?: (info: RateInfo) => void;
  /** Told the tokens the answer cost, where the target reports them (OpenAI-style `usage`, a usage path). */
  onUsage?: (usage: TargetUsage) => void;
  /** Told when a streamed answer's first piece arrived, ms after the call started (time to first token). */
  onFirstToken?: (ms: number) => void;
  /**
   * Told how long the call waited for a free worker or slot before it started (a pool with fewer workers than
   * the run's concurrency): that wait is not the target's latency, and is shown apart.
   */
  onQueued?: (ms: number) => void;
  /** Told how many prompts the answer's call held (a batch function answers several at once), for the run's figures. */
  onBatch?: (size: number) => void;
  /** Which trace the prompt belongs to (a worker's function may use it). */
  context?: { traceId: string; evaluationId?: number; kind?: string };
}

/** Tokens one answer cost, as the target reports them. */
export interface TargetUsage {
  promptTokens?: number;
  completionTokens?: number;
  /** Of the prompt's tokens, those read from the provider's cache (billed at the cached rate). */
  cachedTokens?: number;
}

const MAX_TOKENS_REPORTED = 100_000_000;

/**
 * Reads a usage object an endpoint or a worker returned (hostile until checked): OpenAI's prompt_tokens /
 * completion_tokens, input_tokens / output_tokens (Anthropic-style), or the worker protocol's promptTokens /
 * completionTokens; only whole non-negative numbers within reason are kept.
 */
export function readUsage(value: unknown): TargetUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const count = (x: unknown) => (typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= MAX_TOKENS_REPORTED ? x : undefined);
  const promptTokens = count(v.prompt_tokens) ?? count(v.input_tokens) ?? count(v.promptTokens);
  const completionTokens = count(v.completion_tokens) ?? count(v.output_tokens) ?? count(v.completionTokens);
  if (promptTokens === undefined && completionTokens === undefined) return undefined;
  // OpenAI's prompt_tokens_details.cached_tokens, Anthropic-style cache_read_input_tokens, the worker's cachedTokens.
  const details = v.prompt_tokens_details as Record<string, unknown> | null | undefined;
  const cached = count(typeof details === 'object' && details !== null ? details.cached_tokens : undefined) ?? count(v.cache_read_input_tokens) ?? count(v.cachedTokens);
  const cachedTokens = cached !== undefined && promptTokens !== undefined ? Math.min(cached, promptTokens) : undefined;
  return {
    ...(promptTokens !== undefined ? { promptTokens } : {}),
    ...(completionTokens !== undefined ? { completionTokens } : {}),
    ...(cachedTokens ? { cachedTokens } : {}),
  };
}

export type TargetErrorKind = 'rateLimited' | 'timeout' | 'failed' | 'refused';

export class TargetError extends Error {
  override name = 'TargetError';
  constructor(
    message: string,
    readonly kind: TargetErrorKind,
    readonly details: {
      /** Worth another try (5xx, network, time-out); false for a bad request or a refusal. */
      retryable?: boolean;
      retryAfterMs?: number;
      /** The provider says the quota or billing limit is reached: waiting will not help. */
      quota?: boolean;
      status?: number;
      /** What went wrong in a few fixed words ("unreachable", "no JSON"), never the endpoint's text. */
      cause?: string;
      /** No later call can succeed either (permission refused): the run stops instead of failing every trace. */
      stopsRun?: boolean;
      /** The target could not be set up at all (a module that fails to import): a configuration error. */
      setup?: boolean;
      /**
       * The user's own code failed on this prompt (a Python exception, a worker's error reply): that prompt's
       * answer, tried again only when the user asked for retries (a crashed worker is a passing failure instead).
       */
      userCode?: boolean;
    } = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    return this.details.retryable ?? this.kind !== 'refused';
  }

  /**
   * What a run submits as the answer when the user asked to submit target errors: fixed words built from
   * the kind and status only, so no endpoint body (which may quote a key or header) ever reaches the service.
   */
  get submittable(): string {
    if (this.kind === 'timeout') return 'target error: timeout';
    if (this.kind === 'refused') return 'target error: refused';
    if (this.details.status !== undefined) return `target error: HTTP ${this.details.status}`;
    if (this.kind === 'rateLimited') return 'target error: rate limited';
    return `target error: ${this.details.cause ?? 'failed'}`;
  }
}

export const QUOTA_PATTERN = /quota|billing|insufficient_quota|credit balance|exceeded your current|payment required/i;

/** Runs fn with a deadline and the caller's cancel, through one controller per call. */
export async function withDeadline<T>(
  options: TargetCallOptions,
  what: string,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const onAbort = () => controller.abort(options.signal.reason);
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(controller.signal);
  } catch (error) {
    if (timedOut) throw new TargetError(`${what} did not answer within ${Math.round(options.timeoutMs / 1000)} s`, 'timeout');
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
  }
}
