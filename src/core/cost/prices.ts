import type { JournalRecord } from '../journal/journalRecords';
import type { TargetSpec } from '../targets/targetSpec';

/** A run's prices as journaled with its record: USD per million tokens, and where they came from. */
export type RunPrice = NonNullable<Extract<JournalRecord, { t: 'run' }>['price']>;

/** Prices a user sets for a model: USD per million tokens (evalRunner.prices, or --price-in and --price-out). */
export interface PriceOverride {
  input: number;
  output: number;
  cached?: number;
}

/** The price list's name and version as runs journal them: its bundled snapshot, never updated from the network. */
export const PRICE_LIST = '@pydantic/genai-prices';
export const PRICE_LIST_VERSION = '0.1.8';
/** What an override journals as its source. */
export const OVERRIDE_SOURCE = 'override';
/** OpenAI's Batch API charges half the live price, input and output alike. */
export const BATCH_DISCOUNT = 0.5;

interface PriceLibrary {
  calcPrice(usage: Record<string, number>, model: string, options?: { providerId?: string }): { model: { prices: Record<string, unknown> } } | null;
}

/**
 * The price list, loaded when a price is first asked for: its snapshot is hundreds of KB that only the CLI and the
 * runner read (the extension's bundle leaves it out, scripts/build.mjs). Its remote update is never called.
 */
function priceLibrary(): PriceLibrary {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('@pydantic/genai-prices') as PriceLibrary;
}

const PRICE_MAX = 1_000_000;
const validPrice = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= PRICE_MAX;

/** "openai:gpt-4o" → the provider and the model the price list is asked about. */
function providerOf(model: string, provider: string | undefined): { providerId?: string; model: string } {
  const at = model.indexOf(':');
  if (at > 0 && !provider) return { providerId: model.slice(0, at), model: model.slice(at + 1) };
  return { ...(provider ? { providerId: provider } : {}), model };
}

/** The price list's prices of a model (a flat price per million tokens; tiered or dated ones as the list resolves them now). */
export function listPrice(model: string, provider?: string): RunPrice | undefined {
  const asked = providerOf(model, provider);
  let found: ReturnType<PriceLibrary['calcPrice']>;
  try {
    found = priceLibrary().calcPrice({ input_tokens: 1_000_000, output_tokens: 1_000_000 }, asked.model, asked.providerId ? { providerId: asked.providerId } : {});
  } catch {
    return undefined;
  }
  const prices = found?.model.prices;
  if (!prices || !validPrice(prices.input_mtok) || !validPrice(prices.output_mtok)) return undefined;
  return { src: `${PRICE_LIST} ${PRICE_LIST_VERSION}`, in: prices.input_mtok, out: prices.output_mtok, ...(validPrice(prices.cache_read_mtok) ? { cached: prices.cache_read_mtok } : {}) };
}

export interface PriceChoice {
  model: string;
  /** The price list's provider id (openai for the openai target on OpenAI's API); none: the list guesses from the model. */
  provider?: string;
  /** Through the Batch API: the discount is applied. */
  batch?: boolean;
  /** --price-in / --price-out, USD per million tokens (both, or neither). */
  override?: PriceOverride;
  /** evalRunner.prices: per model. */
  perModel?: Readonly<Record<string, PriceOverride>>;
}

/** A run's prices: the user's override, else the model's in evalRunner.prices, else the price list's; none when none knows. */
export function runPrice(choice: PriceChoice): RunPrice | undefined {
  const own = choice.override ?? choice.perModel?.[choice.model];
  const price = own ? overridePrice(own) : listPrice(choice.model, choice.provider);
  return price && choice.batch ? { ...price, batch: true } : price;
}

function overridePrice(own: PriceOverride): RunPrice {
  return { src: OVERRIDE_SOURCE, in: own.input, out: own.output, ...(own.cached !== undefined ? { cached: own.cached } : {}) };
}

/** evalRunner.prices as a user wrote it (hostile until checked): models with a valid input and output price, the rest left out. */
export function readPriceTable(value: unknown): Record<string, PriceOverride> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const table: Record<string, PriceOverride> = {};
  for (const [model, p] of Object.entries(value as Record<string, unknown>)) {
    const v = (p ?? {}) as Record<string, unknown>;
    if (model.length > 200 || !validPrice(v.input) || !validPrice(v.output)) continue;
    table[model] = { input: v.input, output: v.output, ...(validPrice(v.cached) ? { cached: v.cached } : {}) };
  }
  return table;
}

/**
 * The prices of a run of this target: an openai target's model (the Batch API's discount with batch), or the user's
 * override for any kind whose target reports usage (http with a usage path). None for the others: no usage, no cost.
 */
export function targetPrice(spec: TargetSpec, own: { override?: PriceOverride | undefined; perModel?: Readonly<Record<string, PriceOverride>> | undefined }): RunPrice | undefined {
  if (spec.type === 'openai') {
    const provider = originOf(spec.baseUrl) === 'https://api.openai.com' ? 'openai' : undefined;
    return runPrice({ model: spec.model, ...(provider ? { provider } : {}), ...(spec.batch ? { batch: true } : {}), ...(own.override ? { override: own.override } : {}), ...(own.perModel ? { perModel: own.perModel } : {}) });
  }
  if (spec.type === 'http' && spec.usagePath && own.override) return overridePrice(own.override);
  return undefined;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** What the Batch API saved on these tokens: the discount off the price list's live price; none when the model has no price. */
export function batchSaving(model: string, promptTokens: number, completionTokens: number): number | undefined {
  const price = listPrice(model);
  if (!price) return undefined;
  return ((promptTokens * price.in + completionTokens * price.out) / 1_000_000) * (1 - BATCH_DISCOUNT);
}
