// What a target's endpoint says of its limits, read from its response headers: the targets read them, the run's
// scheduler (src/core/run/rateScheduler.ts) paces by them.

/** What an endpoint said about its limits (see parseRateHeaders). */
export interface RateInfo {
  /** Requests per second the endpoint allows, from its limit headers. */
  requestsPerSecond?: number;
  /** Requests left in the current window; 0 means the next one will be refused. */
  remaining?: number;
  /** When there is one again (with remaining 0), in milliseconds from now. */
  resetMs?: number;
}

/**
 * Reads the rate-limit headers hosted APIs send: OpenAI's x-ratelimit-limit-requests (per minute),
 * -remaining-requests and -reset-requests, Anthropic's anthropic-ratelimit-requests-limit, -remaining and
 * -reset, the -tokens variants of both (no tokens left: wait for their reset), and the IETF RateLimit-Policy
 * ("100;w=60" or with a quoted name, q=100;w=60) and RateLimit (remaining=/r=, reset=/t=) fields.
 * Header names are lower case (as undici gives them). undefined when none is there.
 */
export function parseRateHeaders(headers: Record<string, string | string[] | undefined>): RateInfo | undefined {
  const first = (name: string) => {
    const v = headers[name];
    return (Array.isArray(v) ? v[0] : v)?.trim();
  };
  const num = (v: string | undefined) => {
    const n = v === undefined ? NaN : Number(v);
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const info: RateInfo = {};
  const perMinute = num(first('x-ratelimit-limit-requests')) ?? num(first('anthropic-ratelimit-requests-limit'));
  if (perMinute) info.requestsPerSecond = perMinute / 60;
  const remaining = num(first('x-ratelimit-remaining-requests')) ?? num(first('anthropic-ratelimit-requests-remaining'));
  if (remaining !== undefined) info.remaining = remaining;
  const policy = first('ratelimit-policy');
  if (policy && info.requestsPerSecond === undefined) {
    const quota = /(?:^|[;\s])q=(\d+(?:\.\d+)?)/.exec(policy)?.[1] ?? /^(\d+(?:\.\d+)?)/.exec(policy)?.[1];
    const window = /(?:^|[;\s])w=(\d+(?:\.\d+)?)/.exec(policy)?.[1];
    if (quota && window && Number(window) > 0) info.requestsPerSecond = Number(quota) / Number(window);
  }
  const ietf = first('ratelimit');
  if (ietf && info.remaining === undefined) {
    const r = /(?:remaining=|(?:^|[;,\s])r=)(\d+)/.exec(ietf)?.[1];
    if (r !== undefined) info.remaining = Number(r);
    const t = /(?:reset=|(?:^|[;,\s])t=)(\d+(?:\.\d+)?)/.exec(ietf)?.[1];
    if (t !== undefined) info.resetMs = Number(t) * 1000;
  }
  const openAiReset = parseResetDuration(first('x-ratelimit-reset-requests'));
  if (openAiReset !== undefined) info.resetMs = openAiReset;
  const untilDate = (v: string | undefined) => (v && !Number.isNaN(Date.parse(v)) ? Math.max(0, Date.parse(v) - Date.now()) : undefined);
  const anthropicReset = untilDate(first('anthropic-ratelimit-requests-reset'));
  if (anthropicReset !== undefined) info.resetMs = anthropicReset;
  // Tokens run out too: with none left, the next request waits for the tokens' reset like a request limit's.
  const tokensLeft = num(first('x-ratelimit-remaining-tokens')) ?? num(first('anthropic-ratelimit-tokens-remaining'));
  if (tokensLeft === 0) {
    info.remaining = 0;
    const tokensReset = parseResetDuration(first('x-ratelimit-reset-tokens')) ?? untilDate(first('anthropic-ratelimit-tokens-reset'));
    if (tokensReset !== undefined) info.resetMs = Math.max(info.resetMs ?? 0, tokensReset);
  }
  return info.requestsPerSecond !== undefined || info.remaining !== undefined ? info : undefined;
}

/** OpenAI's reset durations ("12ms", "1s", "6m0s", "1h2m3.5s") in milliseconds. */
export function parseResetDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const m = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/.exec(text.trim());
  if (!m || m[0] === '') return undefined;
  const [, h, min, s, ms] = m;
  return (Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0)) * 1000 + Number(ms ?? 0);
}
