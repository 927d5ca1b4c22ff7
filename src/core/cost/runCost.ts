import type { RunInfo } from '../store/runHistory';
import { BATCH_DISCOUNT } from './prices';
import type { RunPrice } from './prices';

/**
 * What a run (or several) cost: `usd` from the tokens its target reported and its journaled prices; null when the
 * target reported no usage or no price was known, never a guess. `source`: the price list and its version, or
 * "override"; null with no price.
 */
export interface Cost {
  usd: number | null;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  source: string | null;
  /** Why there is no figure, in words, when usd is null. */
  why?: string;
}

export interface Tokens {
  inputTokens: number;
  outputTokens: number;
  cachedTokens?: number;
}

/** The one definition of what tokens cost at a price: cached input at its own rate (else the input rate), Batch API halved. */
export function usdOf(tokens: Tokens, price: RunPrice): number {
  const cached = Math.min(tokens.cachedTokens ?? 0, tokens.inputTokens);
  const usd = ((tokens.inputTokens - cached) * price.in + cached * (price.cached ?? price.in) + tokens.outputTokens * price.out) / 1_000_000;
  return price.batch ? usd * BATCH_DISCOUNT : usd;
}

export const NO_USAGE = 'the target reported no token usage';
export const NO_PRICE = 'no price is known for the model (set --price-in and --price-out, or evalRunner.prices)';

/** One run's cost, from its history (the answers' tokens and the run record's prices). */
export function runCost(run: RunInfo): Cost {
  const tokens = { inputTokens: run.promptTokens, outputTokens: run.completionTokens, cachedTokens: run.cachedTokens };
  if (run.usageReported === 0) return { usd: null, ...tokens, source: run.price?.src ?? null, why: NO_USAGE };
  if (!run.price) return { usd: null, ...tokens, source: null, why: NO_PRICE };
  return { usd: usdOf(tokens, run.price), ...tokens, source: run.price.src };
}

/** Several runs' cost: the sum of those that have one; null when none has; the source when they all share one ("mixed" else). */
export function totalCost(runs: readonly RunInfo[]): Cost {
  const costs = runs.map(runCost);
  const priced = costs.filter((c) => c.usd !== null);
  const sources = [...new Set(priced.map((c) => c.source))];
  const sum = (k: 'inputTokens' | 'outputTokens' | 'cachedTokens') => costs.reduce((a, c) => a + c[k], 0);
  const tokens = { inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), cachedTokens: sum('cachedTokens') };
  if (!priced.length) return { usd: null, ...tokens, source: null, why: costs.find((c) => c.why === NO_PRICE) ? NO_PRICE : NO_USAGE };
  return { usd: priced.reduce((a, c) => a + c.usd!, 0), ...tokens, source: sources.length === 1 ? sources[0]! : 'mixed' };
}

/** "$0.0123", or "no cost: the target reported no token usage": a cost in words for a terminal or a page. */
export function costText(cost: Cost): string {
  if (cost.usd === null) return `no cost: ${cost.why ?? NO_USAGE}`;
  const tokens = `${cost.inputTokens.toLocaleString('en-US')} in${cost.cachedTokens ? ` (${cost.cachedTokens.toLocaleString('en-US')} cached)` : ''}, ${cost.outputTokens.toLocaleString('en-US')} out`;
  return `${usdText(cost.usd)} (${tokens}; prices: ${cost.source ?? 'none'})`;
}

/** Dollars with enough digits to see a cheap run's cost. */
export function usdText(usd: number): string {
  return `$${usd.toFixed(usd >= 1 ? 2 : usd >= 0.01 ? 4 : 6)}`;
}
