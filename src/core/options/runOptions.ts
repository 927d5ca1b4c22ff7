import type { RequestEncoding } from '../../api/kinds';
import type { OnTargetError } from '../run/targetCalls';

// A service down for longer than this stops the run (exit 4 in the CLI); its answers wait in the journal.
export const DEFAULT_SERVICE_PATIENCE_MS = 15 * 60_000;

/**
 * A run's options, as the CLI's flags and the editor's settings both set them: one default and one range each. The
 * CLI refuses a value out of range (its flag's words); the editor brings a setting into range. package.json's
 * settings declare the same (test/unit/targetKinds.test.ts checks).
 */
export const RUN_OPTIONS = {
  concurrency: { default: 8, min: 1, max: 1024 },
  /** Robustness: how long to wait for the adversarial prompts (the CLI waited 0 s by default, the editor 600 s). */
  waitForGenerationSeconds: { default: 600, min: 0, max: 86_400 },
  servicePatienceSeconds: { default: DEFAULT_SERVICE_PATIENCE_MS / 1000, min: 0, max: 7 * 86_400 },
  targetTimeoutSeconds: { default: 600, min: 1, max: 86_400 },
  /** Unset: the core's own (passing failures 2, the user's exceptions 0). */
  targetRetries: { default: undefined, min: 0, max: 20 },
} as const;

export const ON_TARGET_ERROR: readonly OnTargetError[] = ['fail', 'submit'];
export const REQUEST_ENCODINGS: readonly RequestEncoding[] = ['urlencoded', 'multipart'];

export type RunOptionName = keyof typeof RUN_OPTIONS;

/** What a front end read, in its units (seconds); unset means the default. */
export interface RunChoices {
  concurrency?: number;
  onTargetError?: OnTargetError;
  waitForGenerationSeconds?: number;
  servicePatienceSeconds?: number;
  targetTimeoutSeconds?: number;
  targetRetries?: number;
  maxRequestsPerMinute?: number;
  holdAnswers?: boolean;
}

/** The run's options as the session (and a runner process) takes them. */
export interface RunBasics {
  concurrency: number;
  onTargetError: OnTargetError;
  waitForGenerationMs: number;
  servicePatienceMs: number;
  targetTimeoutMs: number;
  targetRetries?: number;
  maxRequestsPerMinute?: number;
  holdAnswers: boolean;
}

/** The one place a run's defaults are filled in and seconds become milliseconds, for the CLI and the editor. */
export function runBasics(choices: RunChoices): RunBasics {
  const seconds = (name: 'waitForGenerationSeconds' | 'servicePatienceSeconds' | 'targetTimeoutSeconds') => (choices[name] ?? RUN_OPTIONS[name].default) * 1000;
  return {
    concurrency: choices.concurrency ?? RUN_OPTIONS.concurrency.default,
    onTargetError: choices.onTargetError ?? 'fail',
    waitForGenerationMs: seconds('waitForGenerationSeconds'),
    servicePatienceMs: seconds('servicePatienceSeconds'),
    targetTimeoutMs: seconds('targetTimeoutSeconds'),
    ...(choices.targetRetries !== undefined ? { targetRetries: choices.targetRetries } : {}),
    ...(choices.maxRequestsPerMinute ? { maxRequestsPerMinute: choices.maxRequestsPerMinute } : {}),
    holdAnswers: choices.holdAnswers === true,
  };
}

/** A setting's number brought into its option's range (whole; not a number: the default, or the minimum). */
export function clampRunOption(name: Exclude<RunOptionName, 'targetRetries'>, value: unknown): number {
  const { default: fallback, min, max } = RUN_OPTIONS[name];
  const n = typeof value === 'number' ? value : fallback;
  return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.floor(n))) : min;
}
