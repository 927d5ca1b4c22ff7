import type { RunInfo } from '../store/traceStore';
import { costText, runCost } from '../cost/runCost';
import type { Cost } from '../cost/runCost';

/** What a run cost and how it went, summarised from its journaled answers and failures. */
export interface RunStats {
  /** Latency of the target's answers (nearest-rank percentiles); absent when the run has none. */
  latencyMs?: { p50: number; p95: number; max: number };
  /**
   * The wait for a free worker or slot before each call started (a pool smaller than the run's concurrency): apart
   * from the latency, which is the target's own time; absent when the target measured none.
   */
  queueWaitMs?: { p50: number; p95: number; max: number };
  /** The batches a batch function was called with: their mean and largest size; absent when it had none. */
  batches?: { mean: number; max: number };
  /** Time to first token of streamed answers; absent when none was streamed. */
  ttftMs?: { p50: number; p95: number };
  /** Token totals; absent when the target reported none. */
  tokens?: { prompt: number; completion: number };
  /** What the run cost, from the tokens its target reported and its journaled prices (usd null: none, and why). */
  cost: Cost;
  /** Failures and submitted target errors, by reason. */
  errors: Record<string, number>;
  /** Answers per second between the run's start and its last answer. */
  tracesPerSecond?: number;
}

/** The nearest-rank percentile (q in 0..1) of values sorted ascending. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export function runStats(run: RunInfo): RunStats {
  const stats: RunStats = { cost: runCost(run), errors: { ...run.errors } };
  if (run.latencies.length > 0) stats.latencyMs = spread(run.latencies);
  if (run.queueWaits.length > 0) stats.queueWaitMs = spread(run.queueWaits);
  if (run.batchSizes.length > 0) stats.batches = batchFigures(run.batchSizes);
  if (run.ttfts.length > 0) {
    const sorted = Float64Array.from(run.ttfts).sort();
    stats.ttftMs = { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
  }
  if (run.usageReported > 0) stats.tokens = { prompt: run.promptTokens, completion: run.completionTokens };
  if (run.lastAnswerAt !== undefined && run.lastAnswerAt > run.startedAt && run.latencies.length > 0) {
    stats.tracesPerSecond = Math.round((run.latencies.length / ((run.lastAnswerAt - run.startedAt) / 1000)) * 10) / 10;
  }
  return stats;
}

/**
 * Each answer knows the size of its batch, so a batch of s counts s times; summing 1/s counts each batch once: the mean
 * is per batch, not per answer (batches of 32 and 8: 20, not 27). Traces that failed are missing from both sides.
 */
function batchFigures(sizes: readonly number[]): { mean: number; max: number } {
  let answers = 0;
  let batches = 0;
  let max = 0;
  for (const s of sizes) {
    if (!(s >= 1)) continue; // a hand-edited journal's 0 or NaN
    answers++;
    batches += 1 / s;
    max = Math.max(max, s);
  }
  return { mean: batches > 0 ? Math.round((answers / batches) * 10) / 10 : 0, max };
}

/** p50, p95 and max (nearest-rank, as `percentile` of the sorted values) of values in any order. */
export function spread(values: readonly number[]): { p50: number; p95: number; max: number } {
  // Selected, not sorted: Run Details asks a run's figures each second, and sorting 100k latencies took 40-70 ms.
  const a = Float64Array.from(values);
  const at95 = Math.max(1, Math.ceil(0.95 * a.length)) - 1;
  const p95 = select(a, at95, 0, a.length - 1);
  // select leaves every value after p95's place at least p95, and every one before it at most p95.
  let max = p95;
  for (let i = at95 + 1; i < a.length; i++) max = Math.max(max, a[i]!);
  return { p50: select(a, Math.max(1, Math.ceil(0.5 * a.length)) - 1, 0, at95), p95, max };
}

/** The k-th smallest of a[lo..hi] (Hoare's selection): a is left partitioned around it. */
function select(a: Float64Array, k: number, lo: number, hi: number): number {
  while (lo < hi) {
    const pivot = Math.max(Math.min(a[lo]!, a[hi]!), Math.min(Math.max(a[lo]!, a[hi]!), a[(lo + hi) >> 1]!));
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

/** "latency p50 120 ms · p95 340 ms · max 1.2 s · 12,345 + 6,789 tokens" for headers and terminals. */
export function describeStats(stats: RunStats, options: { cost?: boolean } = {}): string {
  const parts: string[] = [];
  if (stats.latencyMs) parts.push(`latency p50 ${ms(stats.latencyMs.p50)} · p95 ${ms(stats.latencyMs.p95)} · max ${ms(stats.latencyMs.max)}`);
  if (stats.queueWaitMs) parts.push(`worker wait p50 ${ms(stats.queueWaitMs.p50)} · p95 ${ms(stats.queueWaitMs.p95)} · max ${ms(stats.queueWaitMs.max)}`);
  if (stats.batches) parts.push(`batches: mean ${stats.batches.mean}, max ${stats.batches.max}`);
  if (stats.ttftMs) parts.push(`first token p50 ${ms(stats.ttftMs.p50)} · p95 ${ms(stats.ttftMs.p95)}`);
  if (stats.tokens) parts.push(`tokens ${stats.tokens.prompt.toLocaleString('en-US')} prompt + ${stats.tokens.completion.toLocaleString('en-US')} completion`);
  // A page that shows the cost on a line of its own (Run Details) leaves it out here.
  if (options.cost !== false && (stats.cost.usd !== null || stats.tokens)) parts.push(`cost ${costText(stats.cost)}`);
  if (stats.tracesPerSecond !== undefined) parts.push(`${stats.tracesPerSecond} answered/s`);
  const errors = Object.values(stats.errors).reduce((a, b) => a + b, 0);
  if (errors) parts.push(`${errors} error(s)`);
  return parts.join(' · ');
}

function ms(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}
