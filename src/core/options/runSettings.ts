import { DEFAULT_MAX_LIST_MEGABYTES } from '../../api/client';
import type { RequestEncoding } from '../../api/evaluationKinds';

// A service down for longer than this stops the run (exit 4 in the CLI); its answers wait in the journal.
export const DEFAULT_SERVICE_PATIENCE_MS = 15 * 60_000;

/** What a run does with a trace the target failed on: fail it, or submit fixed words for it. */
export const ON_TARGET_ERROR = ['fail', 'submit'] as const;
export type OnTargetError = (typeof ON_TARGET_ERROR)[number];

/** The text submitted for a skipped trace, by default ({reason} and {traceId} are filled in; see run/skipped.ts). */
export const DEFAULT_SKIPPED_ANSWER = 'Not answered: {reason}';
export const REQUEST_ENCODINGS: readonly RequestEncoding[] = ['urlencoded', 'multipart'];

export const DEFAULT_PROCESS_DETAILS_URL = '{baseUrl}/evaluations/{evaluationId}';

/** Which commands take a config's flag: the service's (all), the state folder's (those with a journal), the run's. */
export type ConfigScope = 'service' | 'journal' | 'run';

interface Common {
  /** The CLI's flag (without --); none: the editor alone uses the setting (a config file may hold it, and it is ignored). */
  flag?: string;
  /** Which commands take the flag (default: the run's). */
  scope?: ConfigScope;
}
export interface IntegerSetting extends Common {
  type: 'integer';
  /** undefined: unset unless given (package.json's null). */
  default: number | undefined;
  min: number;
  max?: number;
  /** The value that means none: no flag is written for it. */
  unset?: number;
}
export interface BooleanSetting extends Common {
  type: 'boolean';
  default: boolean;
}
export interface ChoiceSetting extends Common {
  type: 'choice';
  default: string;
  values: readonly string[];
}
export interface TextSetting extends Common {
  type: 'text';
  default: string;
}
/** An amount that need not be whole (USD): brought into its range, never rounded. */
export interface DecimalSetting extends Common {
  type: 'decimal';
  /** undefined: unset unless given (package.json's null). */
  default: number | undefined;
  min: number;
  max: number;
}
/** Prices per model, USD per million tokens: `{ "gpt-4o": { "input": 2.5, "output": 10, "cached": 1.25 } }`. */
export interface PricesSetting extends Common {
  type: 'prices';
  default: Readonly<Record<string, never>>;
}
export type RunSetting = IntegerSetting | BooleanSetting | ChoiceSetting | TextSetting | DecimalSetting | PricesSetting;

/** USD amounts (a budget, a threshold, a price) stop here: more is a typo. */
export const MAX_USD = 1_000_000;

/**
 * Every run setting, once: the editor's `evalRunner.<key>` and the key of a `--config` file are the same name. The
 * config file's schema, its flags, the editor's reading of its settings, Copy as CLI Command and the CLI's range
 * checks all derive from here; package.json declares the same (test/unit/runSettings.test.ts checks). The order is
 * the order a config's flags are written in. baseUrl, evaluations and target have shapes of their own (runConfig.ts).
 */
export const RUN_SETTINGS = {
  /** The guard against a runaway prompt list, in MB. */
  maxListMegabytes: { type: 'integer', default: DEFAULT_MAX_LIST_MEGABYTES, min: 1, max: 1024 * 1024, flag: 'max-list-mb', scope: 'service' },
  /** Where journals live; empty: the CLI's folder (the same history for both). */
  stateDir: { type: 'text', default: '', flag: 'state-dir', scope: 'journal' },
  concurrency: { type: 'integer', default: 8, min: 1, max: 1024, flag: 'concurrency' },
  /** A cap on target requests per minute; 0: learned from the endpoint. */
  maxRequestsPerMinute: { type: 'integer', default: 0, min: 0, unset: 0, flag: 'max-rpm' },
  /** Answers wait for a person's review before they are submitted (the CLI holds them: --no-submit). */
  reviewBeforeSubmit: { type: 'boolean', default: false, flag: 'no-submit' },
  onTargetError: { type: 'choice', default: 'fail', values: ON_TARGET_ERROR, flag: 'on-target-error' },
  requestEncoding: { type: 'choice', default: 'urlencoded', values: REQUEST_ENCODINGS, flag: 'encoding' },
  /** Robustness: how long to wait for the adversarial prompts (the CLI waited 0 s by default, the editor 600 s). */
  waitForGenerationSeconds: { type: 'integer', default: 600, min: 0, max: 86_400, flag: 'wait-for-generation' },
  /** The text submitted for a skipped trace (Submit as Not Answered); {reason} is the skip's reason. */
  skippedAnswer: { type: 'text', default: DEFAULT_SKIPPED_ANSWER, flag: 'skipped-answer' },
  /** In seconds: how long the service may be down before a run stops (its answers wait in the journal). */
  servicePatience: { type: 'integer', default: DEFAULT_SERVICE_PATIENCE_MS / 1000, min: 0, max: 7 * 86_400, flag: 'service-patience' },
  /** The share of failed target calls (over the last 50, after 20) that stops the run; "off": never. */
  maxErrorRate: { type: 'text', default: '0.5', flag: 'max-error-rate' },
  /** Stop before the evaluation's spend (all its runs) could pass this many USD; unset: no budget (src/core/cost/budget.ts). */
  budgetUsd: { type: 'decimal', default: undefined, min: 0, max: MAX_USD, flag: 'budget' },
  /** Each model's prices over the price list's, USD per million tokens (src/core/cost/prices.ts reads them). */
  prices: { type: 'prices', default: {}, flag: 'prices' },
  /** Further tries of a failing target call; unset: the core's own (passing failures 2, the user's exceptions 0). */
  targetRetries: { type: 'integer', default: undefined, min: 0, max: 20, flag: 'target-retries' },
  /** The service's own page for an evaluation (Open Process Details on the Service). */
  processDetailsUrl: { type: 'text', default: DEFAULT_PROCESS_DETAILS_URL },
  /** Run asks first, showing the estimate, when a run's estimate passes this many USD (the CLI has --estimate). */
  estimateThresholdUsd: { type: 'decimal', default: 1, min: 0, max: MAX_USD },
  /** Closing the editor leaves its runs going on in their runner processes (off: closing ends them as Ctrl-C does). */
  keepRunsAlive: { type: 'boolean', default: true },
  /** The port Try the Local Sandbox prefers; 0: its last one, or any free one. */
  'sandbox.port': { type: 'integer', default: 0, min: 0, max: 65_535 },
} as const satisfies Record<string, RunSetting>;

export type RunSettingName = keyof typeof RUN_SETTINGS;
export const RUN_SETTING_NAMES = Object.keys(RUN_SETTINGS) as RunSettingName[];

/** The settings the CLI reads (each has a flag); the others are the editor's alone. */
export const CLI_SETTING_NAMES = RUN_SETTING_NAMES.filter((name) => 'flag' in RUN_SETTINGS[name]);

type ValueOf<S> = S extends { type: 'integer' | 'decimal'; default: undefined }
  ? number | undefined
  : S extends { type: 'integer' | 'decimal' }
    ? number
    : S extends { type: 'prices' }
      ? Readonly<Record<string, unknown>>
      : S extends { type: 'boolean' }
        ? boolean
        : S extends { values: readonly (infer V)[] }
          ? V
          : string;
/** A setting's value as read: a number unset by default may be undefined. */
export type RunSettingValue<N extends RunSettingName> = ValueOf<(typeof RUN_SETTINGS)[N]>;
export type RunSettingValues = { [N in RunSettingName]: RunSettingValue<N> };

/** Every run setting as the editor reads it (`get`: a setting's raw value): a number brought into range (whole), else the default. */
export function readRunSettings(get: (name: RunSettingName) => unknown): RunSettingValues {
  return Object.fromEntries(RUN_SETTING_NAMES.map((name) => [name, readValue(RUN_SETTINGS[name], get(name))])) as RunSettingValues;
}

function readValue(setting: RunSetting, value: unknown): number | boolean | string | Readonly<Record<string, unknown>> | undefined {
  switch (setting.type) {
    case 'integer': {
      if (typeof value !== 'number') return setting.default;
      return Number.isFinite(value) ? Math.min(setting.max ?? Number.MAX_SAFE_INTEGER, Math.max(setting.min, Math.floor(value))) : setting.min;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : setting.default;
    case 'choice':
      return typeof value === 'string' && setting.values.includes(value) ? value : setting.default;
    case 'text':
      return typeof value === 'string' ? value : setting.default;
    case 'decimal':
      if (typeof value !== 'number') return setting.default;
      return Number.isFinite(value) ? Math.min(setting.max, Math.max(setting.min, value)) : setting.min;
    case 'prices':
      // Each model's prices are checked where they are used (readPriceTable): here only the shape of a table.
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : setting.default;
  }
}

/** A setting's value as flags: none for an absent value, an unset number, a boolean off, or an editor-only setting. */
export function settingFlags(name: RunSettingName, value: number | boolean | string | Readonly<Record<string, unknown>> | null | undefined): string[] {
  const setting: RunSetting = RUN_SETTINGS[name];
  if (setting.flag === undefined || value === undefined || value === null) return [];
  if (setting.type === 'boolean') return value === true ? [`--${setting.flag}`] : [];
  // A table goes as its JSON (prices: no secret, only numbers per model); an empty one is the default.
  if (typeof value === 'object') return Object.keys(value).length ? [`--${setting.flag}`, JSON.stringify(value)] : [];
  if (setting.type === 'integer' && value === setting.unset) return [];
  return [`--${setting.flag}`, String(value)];
}
