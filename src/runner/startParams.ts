// The start message in the core's terms: the protocol's plain data become the core's target spec and run options.
import { isTargetType, readPriceTable, targetPrice } from '../core';
import type { HostRunRequest, RunOptions, TargetSpec } from '../core';
import type { StartParams, TargetSpecParams } from '../protocol/runnerTypes';

/** What the start message says of the run, as the session's options (the rest is the runner's own). */
export type StartedRun = Pick<HostRunRequest, keyof RunOptions | 'identity' | 'mode' | 'tool' | 'only' | 'reuseFetchedPrompts' | 'subset'>;

/** The target's spec: a kind this runner knows, whose descriptor reads the rest (as it reads a config file's). */
export function targetSpecOf(spec: TargetSpecParams): TargetSpec {
  if (!isTargetType(spec.type) || spec.type === 'manual') throw new Error(`This runner has no target of kind "${spec.type}".`);
  return spec as unknown as TargetSpec;
}

/**
 * The run's options as the window read them (RunOptions, mode, tool); only the trace list changes form. A rerun's
 * subset goes to hostRun as it came: the core picks its traces and how they run (session.rerun).
 */
export function startedRun(params: StartParams): StartedRun {
  const { only, reuseFetchedPrompts, subset, ...options } = params.run;
  return {
    identity: params.identity,
    ...options,
    ...(only ? { only: new Set(only) } : {}),
    ...(reuseFetchedPrompts ? { reuseFetchedPrompts: true } : {}),
    ...(subset ? { subset } : {}),
  };
}

/** The run's prices and budget, as the CLI's (costFlags.ts); `unbudgeted`: why the budget set does not apply. */
export interface StartedCost {
  cost: Pick<HostRunRequest, 'price' | 'budgetUsd'>;
  unbudgeted?: string;
}

/**
 * The run's prices from the window's evalRunner.prices, else the price list's (targetPrice, as the CLI calls it), so
 * an editor run journals its prices and shows its cost. A budget needs a price: without one it is said, not applied.
 */
export function startedCost(params: StartParams): StartedCost {
  const spec = targetSpecOf(params.target.spec);
  const price = targetPrice(spec, { perModel: readPriceTable(params.cost?.prices) });
  const budgetUsd = params.cost?.budgetUsd;
  if (budgetUsd !== undefined && !price) {
    const why = spec.type === 'openai' ? `no price is known for the model "${spec.model}" (set it in evalRunner.prices)` : `the ${spec.type} target reports no token usage to price`;
    return { cost: {}, unbudgeted: `evalRunner.budgetUsd is not applied to this run: ${why}.` };
  }
  return { cost: { ...(price ? { price } : {}), ...(budgetUsd !== undefined ? { budgetUsd } : {}) } };
}
