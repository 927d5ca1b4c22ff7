// --max-error-rate and evalRunner.maxErrorRate as a user sets them; the run stops by them in run/errorRate.ts.

export interface MaxErrorRate {
  /** The share of failed calls, over the window, that ends the run once passed (0 < rate < 1; 1 would never pass). */
  rate: number;
  /** The last this many target calls. */
  window: number;
  /** Nothing is decided before this many calls. */
  minCalls: number;
}

/** On by default: half of the last 50 calls failed, after at least 20. */
export const DEFAULT_MAX_ERROR_RATE: MaxErrorRate = { rate: 0.5, window: 50, minCalls: 20 };

/** The setting's or flag's text: "off", or a share from 0 to 1 ("0.5"); a RangeError in words otherwise. */
export function parseMaxErrorRate(text: string): MaxErrorRate | 'off' {
  const t = text.trim().toLowerCase();
  if (t === 'off') return 'off';
  const rate = Number(t);
  if (t === '' || !Number.isFinite(rate) || rate < 0 || rate >= 1) {
    throw new RangeError(`--max-error-rate takes a share of failed target calls from 0 to 1 (below 1), such as 0.5, or "off"; not "${text}".`);
  }
  return { ...DEFAULT_MAX_ERROR_RATE, rate };
}

/** The editor's setting: as the flag reads it, but a value it cannot read is the default (as the other settings). */
export function maxErrorRateSetting(text: unknown): MaxErrorRate | 'off' {
  try {
    return parseMaxErrorRate(typeof text === 'string' ? text : String(DEFAULT_MAX_ERROR_RATE.rate));
  } catch {
    return DEFAULT_MAX_ERROR_RATE;
  }
}
