// The run command's cost flags: prices of its own (--price-in, --price-out), a budget, an estimate instead of a run.
import { estimateTarget, estimateText, readPriceTable, RUN_SETTINGS, targetPrice } from '../core';
import type { Estimate, RunInfo, RunPrice, TargetSpec, TraceInfo } from '../core';
import { UsageError } from './exitCodes';

export const COST_FLAGS = {
  'price-in': { type: 'string' },
  'price-out': { type: 'string' },
  budget: { type: 'string' },
  prices: { type: 'string' },
  estimate: { type: 'boolean' },
} as const;

export const COST_HELP = `  --price-in USD --price-out USD  the model's prices per million input and output tokens, over the price
                              list's (${'@pydantic/genai-prices'}, its bundled snapshot); both or neither
  --prices JSON               each model's prices, USD per million tokens, over the list's (evalRunner.prices):
                              '{"gpt-4o":{"input":2.5,"output":10}}'; --price-in/--price-out win
  --budget USD                stop before the evaluation's spend (all its runs, from the tokens the target
                              reports) could pass USD, counting the calls in flight: exit 6; a larger budget goes on
  --estimate                  call no target and submit nothing: print the traces to call, the tokens and the cost`;

/** A price or budget in USD as typed: a finite number, not negative, within reason. */
function usd(value: string | boolean | undefined, flag: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  const n = Number(value);
  // The range is the setting's (evalRunner.budgetUsd), for a price too.
  const { min, max } = RUN_SETTINGS.budgetUsd;
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new UsageError(`--${flag} takes an amount in USD, ${min} to ${max} (got "${value}").`);
  return n;
}

export interface CostChoices {
  spec: TargetSpec;
  price: RunPrice | undefined;
  budgetUsd?: number;
  estimate: boolean;
}

/** --prices as typed (a config's evalRunner.prices travels as it): a JSON table, its models checked by readPriceTable. */
function pricesFlag(value: string | boolean | Array<string | boolean> | undefined): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new UsageError(`--prices takes a JSON table of USD per million tokens, e.g. '{"gpt-4o":{"input":2.5,"output":10}}' (it is not JSON).`);
  }
}

/** The cost flags read against the target: its price (the override's, the list's or none), checked with the budget. */
export function costChoices(v: Record<string, string | boolean | Array<string | boolean> | undefined>, spec: TargetSpec, pricesSetting: unknown = pricesFlag(v.prices)): CostChoices {
  const input = usd(v['price-in'] as string | undefined, 'price-in');
  const output = usd(v['price-out'] as string | undefined, 'price-out');
  if ((input === undefined) !== (output === undefined)) throw new UsageError('Give --price-in and --price-out together (USD per million tokens).');
  const override = input !== undefined && output !== undefined ? { input, output } : undefined;
  const price = targetPrice(spec, { override, perModel: readPriceTable(pricesSetting) });
  const budgetUsd = usd(v.budget as string | undefined, 'budget');
  if (budgetUsd !== undefined && !price) {
    const why = spec.type === 'openai' ? `no price is known for the model "${spec.model}"` : `the ${spec.type} target reports no token usage to price`;
    throw new UsageError(`--budget needs a price, and ${why}: give --price-in and --price-out${spec.type === 'http' ? ' with --usage-path' : ''}, or leave out --budget.`);
  }
  return { spec, price, ...(budgetUsd !== undefined ? { budgetUsd } : {}), estimate: v.estimate === true };
}

/** run --estimate's words: the traces the run would call, their tokens and cost. */
export function estimateWords(traces: readonly TraceInfo[], spec: TargetSpec, price: RunPrice | undefined, pastRuns: readonly RunInfo[]): string {
  return `Estimate (nothing was called or submitted):\n${estimateText(estimateFor(traces, spec, price, pastRuns))}\n`;
}

/** The estimate of a run calling these traces with this target (run --estimate, and the MCP server's estimate_run). */
export function estimateFor(traces: readonly TraceInfo[], spec: TargetSpec, price: RunPrice | undefined, pastRuns: readonly RunInfo[]): Estimate {
  return estimateTarget(
    traces.map((t) => t.prompt ?? ''),
    spec,
    price,
    pastRuns,
  );
}
