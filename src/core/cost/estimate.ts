import type { RunInfo } from '../store/runHistory';
import type { TargetSpec } from '../targets/targetSpec';
import type { RunPrice } from './prices';
import { usdOf, usdText } from './runCost';
import { tokenCounter } from './tokens';

/** What a run would cost before it calls anything (run --estimate): ranges where the figures are uncertain. */
export interface Estimate {
  /** Traces the run would send to the target. */
  traces: number;
  inputTokens: number;
  outputTokens: { low: number; high: number };
  /** null: no price is known for the model. */
  usd: { low: number; high: number } | null;
  source: string | null;
  /** What the figures assume, in words (no tokenizer for the model, no past answers). */
  assumptions: string[];
}

export interface EstimateInput {
  /** The prompts the run would send. */
  prompts: readonly string[];
  model?: string | undefined;
  systemPrompt?: string | undefined;
  price?: RunPrice | undefined;
  /** The evaluation's past runs: their answers' tokens tell how long answers are. */
  pastRuns?: readonly RunInfo[];
  /** max_tokens, where the target sets one: no answer is longer. */
  maxAnswerTokens?: number | undefined;
}

// Without past answers, an answer is assumed to be this many times as long as its prompt.
const ASSUMED_ANSWER = { low: 0.5, high: 2 };

/** The estimate of a run over these prompts: input counted, output from past runs (or a stated assumption), cost from the prices. */
export function estimateRun(input: EstimateInput): Estimate {
  const counter = tokenCounter(input.model);
  const assumptions = counter.assumption ? [counter.assumption] : [];
  const system = input.systemPrompt ? counter.count(input.systemPrompt) : 0;
  let inputTokens = 0;
  for (const p of input.prompts) inputTokens += counter.count(p) + system;
  const outputTokens = answerTokens(input, inputTokens, assumptions);
  const price = input.price;
  const usd = price ? { low: usdOf({ inputTokens, outputTokens: outputTokens.low }, price), high: usdOf({ inputTokens, outputTokens: outputTokens.high }, price) } : null;
  return { traces: input.prompts.length, inputTokens, outputTokens, usd, source: price?.src ?? null, assumptions };
}

function answerTokens(input: EstimateInput, inputTokens: number, assumptions: string[]): { low: number; high: number } {
  const n = input.prompts.length;
  const cap = (x: number) => Math.round(input.maxAnswerTokens !== undefined ? Math.min(x, input.maxAnswerTokens * n) : x);
  const past = (input.pastRuns ?? []).filter((r) => r.usageReported > 0).map((r) => r.completionTokens / r.usageReported);
  if (past.length) {
    assumptions.push(`answer tokens from this evaluation's ${past.length} past run(s): ${Math.round(Math.min(...past))}–${Math.round(Math.max(...past))} per answer`);
    return { low: cap(Math.min(...past) * n), high: cap(Math.max(...past) * n) };
  }
  assumptions.push(`no past answers: each answer assumed ${ASSUMED_ANSWER.low}–${ASSUMED_ANSWER.high} times as long as its prompt`);
  return { low: cap(inputTokens * ASSUMED_ANSWER.low), high: cap(inputTokens * ASSUMED_ANSWER.high) };
}

/** The estimate in a few lines, for a terminal or the editor's confirmation; `noCost`: why there is no cost, when none. */
export function estimateText(e: Estimate, noCost = 'no price for the model; set --price-in and --price-out'): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const range = (lo: string, hi: string) => (lo === hi ? lo : `${lo}–${hi}`);
  const usd = usdText;
  return [
    `Traces to call: ${n(e.traces)}`,
    `Input tokens: ${n(e.inputTokens)}`,
    `Output tokens: ${range(n(e.outputTokens.low), n(e.outputTokens.high))}`,
    e.usd ? `Cost: ${range(usd(e.usd.low), usd(e.usd.high))} (prices: ${e.source ?? 'none'})` : `Cost: unknown (${noCost})`,
    ...e.assumptions.map((a) => `Assumed: ${a}`),
  ].join('\n');
}

/** The estimate of a run of this target over these prompts: its model, system prompt and max_tokens where it has them. */
export function estimateTarget(prompts: readonly string[], spec: TargetSpec, price: RunPrice | undefined, pastRuns: readonly RunInfo[]): Estimate {
  const openai = spec.type === 'openai' ? spec : undefined;
  return estimateRun({ prompts, model: openai?.model, systemPrompt: openai?.systemPrompt, price, pastRuns, maxAnswerTokens: openai?.maxTokens });
}
