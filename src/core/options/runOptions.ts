import type { OnTargetError } from './runSettings';
import { RUN_SETTINGS } from './runSettings';
import type { MaxErrorRate } from './maxErrorRate';

export { DEFAULT_SERVICE_PATIENCE_MS, ON_TARGET_ERROR, REQUEST_ENCODINGS } from './runSettings';

/**
 * The numeric run options' defaults and ranges (a table; RunOptions below is the type), as the CLI's flags and the
 * editor's settings both set them: one default and one range each, the settings' own (RUN_SETTINGS). The CLI refuses
 * a value out of range (its flag's words); the editor brings a setting into range.
 */
export const RUN_OPTIONS = {
  concurrency: RUN_SETTINGS.concurrency,
  waitForGenerationSeconds: RUN_SETTINGS.waitForGenerationSeconds,
  servicePatienceSeconds: RUN_SETTINGS.servicePatience,
  /** The CLI's alone: the editor's targets take the default. */
  targetTimeoutSeconds: { default: 600, min: 1, max: 86_400, flag: 'target-timeout' },
  targetRetries: RUN_SETTINGS.targetRetries,
} as const;

export type RunOptionName = keyof typeof RUN_OPTIONS;

/**
 * A run's options as a user sets them, whoever hosts the run, each filled in (runOptions), in milliseconds: defined
 * and documented here once. The engine takes them as EngineOptions (each optional there). The layers above add:
 * RunChoices, the front end's units; CliRunRequest, the service, token and target of a command line; the runner
 * protocol's RunOptionsParams (StartParams['run']), the mode, tool and trace list.
 */
export interface RunOptions {
  /** Traces handled at once (target calls and submissions overlap within it). */
  concurrency: number;
  onTargetError: OnTargetError;
  /** Robustness: how long to wait for generation before giving up; 0 tries once. */
  waitForGenerationMs: number;
  /** How long the service may be down (gateway errors, refused connections, time-outs) before the run stops. */
  servicePatienceMs: number;
  targetTimeoutMs: number;
  /** Journal answers, submit nothing: they wait as Responded (--no-submit, review before submitting). */
  holdAnswers: boolean;
  /**
   * Further tries of a failing target call (rate limits aside). Unset: 2 for passing failures (a crashed worker, a
   * 503) and none for an exception the user's own code raised; set (--target-retries N): N for both.
   */
  targetRetries?: number;
  /** A fixed cap on target requests per minute (--max-rpm); the pace is learned under it. */
  maxRequestsPerMinute?: number;
  /** Stop when the target mostly fails (--max-error-rate); unset: on, at its defaults (run/errorRate.ts). */
  maxErrorRate?: MaxErrorRate | 'off';
}

/**
 * What a front end read (the CLI's flags, the editor's settings), derived from RunOptions: in seconds where it holds
 * milliseconds, and each unset one takes its default (runOptions).
 */
export type RunChoices = {
  [K in keyof RunOptions as K extends `${infer Name}Ms` ? `${Name}Seconds` : K]?: RunOptions[K];
};

/** The one place a run's defaults are filled in and seconds become milliseconds, for the CLI and the editor. */
export function runOptions(choices: RunChoices): RunOptions {
  const seconds = (name: 'waitForGenerationSeconds' | 'servicePatienceSeconds' | 'targetTimeoutSeconds') => (choices[name] ?? RUN_OPTIONS[name].default) * 1000;
  return {
    concurrency: choices.concurrency ?? RUN_OPTIONS.concurrency.default,
    onTargetError: choices.onTargetError ?? RUN_SETTINGS.onTargetError.default,
    waitForGenerationMs: seconds('waitForGenerationSeconds'),
    servicePatienceMs: seconds('servicePatienceSeconds'),
    targetTimeoutMs: seconds('targetTimeoutSeconds'),
    ...(choices.targetRetries !== undefined ? { targetRetries: choices.targetRetries } : {}),
    ...(choices.maxRequestsPerMinute ? { maxRequestsPerMinute: choices.maxRequestsPerMinute } : {}),
    ...(choices.maxErrorRate ? { maxErrorRate: choices.maxErrorRate } : {}),
    holdAnswers: choices.holdAnswers === true,
  };
}
