import type { EngineOptions } from './engineOptions';
import { RUN_SETTINGS } from './runSettings';

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
 * A run's options as a user sets them, whoever hosts the run: the options of EngineOptions that the CLI's flags and the
 * editor's settings set, each filled in (runOptions), in milliseconds. The layers above add: RunChoices, the front
 * end's units; CliRunRequest, the service, token and target of a command line; the runner protocol's RunOptionsParams
 * (StartParams['run']), the mode, tool and trace list. SessionRunOptions and EngineOptions below add what the
 * session and the engine supply.
 */
export type RunOptions = Required<Pick<EngineOptions, 'concurrency' | 'onTargetError' | 'waitForGenerationMs' | 'servicePatienceMs' | 'targetTimeoutMs' | 'holdAnswers'>> &
  Pick<EngineOptions, 'targetRetries' | 'maxRequestsPerMinute'>;

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
    holdAnswers: choices.holdAnswers === true,
  };
}
