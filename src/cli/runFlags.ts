// The run command's flags, and the run's options read from them: the defaults and ranges are the core's (RUN_OPTIONS).
import { ON_TARGET_ERROR, RUN_OPTIONS, parseMaxErrorRate, parseShard, runOptions } from '../core';
import type { MaxErrorRate, RunOptions, Shard } from '../core';
import { choiceOption, intOption } from './args';
import { SERVICE_OPTIONS } from './common';
import { UsageError } from './exitCodes';
import { TARGET_OPTIONS } from './targetOptions';
import { COST_FLAGS } from './costFlags';

export const RUN_FLAGS = {
  ...SERVICE_OPTIONS,
  ...TARGET_OPTIONS,
  concurrency: { type: 'string' },
  'state-dir': { type: 'string' },
  'wait-for-generation': { type: 'string' },
  'service-patience': { type: 'string' },
  'target-retries': { type: 'string' },
  'on-target-error': { type: 'string' },
  encoding: { type: 'string' },
  'no-journal': { type: 'boolean' },
  json: { type: 'boolean' },
  fresh: { type: 'boolean' },
  'reuse-answers': { type: 'boolean' },
  limit: { type: 'string' },
  'no-submit': { type: 'boolean' },
  'max-rpm': { type: 'string' },
  'max-error-rate': { type: 'string' },
  only: { type: 'string' },
  shard: { type: 'string' },
  'submit-skipped': { type: 'boolean' },
  'skipped-answer': { type: 'string' },
  ...COST_FLAGS,
} as const;

/** The run's options from its flags: the defaults and ranges are the core's, the editor's too (RUN_OPTIONS). */
export function runOptionsOf(v: Record<string, string | boolean | Array<string | boolean> | undefined>): RunOptions {
  const text = (flag: string) => (typeof v[flag] === 'string' ? v[flag] : undefined);
  const option = (name: 'concurrency' | 'waitForGenerationSeconds' | 'servicePatienceSeconds' | 'targetRetries') => {
    const { min, max, flag } = RUN_OPTIONS[name];
    const value = text(flag);
    return value === undefined ? undefined : intOption(value, flag, 0, min, max);
  };
  const onTargetError = text('on-target-error');
  const maxRpm = text('max-rpm');
  const maxErrorRate = text('max-error-rate');
  return runOptions({
    concurrency: option('concurrency'),
    waitForGenerationSeconds: option('waitForGenerationSeconds'),
    servicePatienceSeconds: option('servicePatienceSeconds'),
    targetRetries: option('targetRetries'),
    onTargetError: onTargetError === undefined ? undefined : choiceOption(onTargetError, 'on-target-error', ON_TARGET_ERROR),
    holdAnswers: v['no-submit'] === true,
    ...(maxRpm !== undefined ? { maxRequestsPerMinute: intOption(maxRpm, 'max-rpm', 0, 1) } : {}),
    ...(maxErrorRate !== undefined ? { maxErrorRate: errorRateOption(maxErrorRate) } : {}),
  });
}

function errorRateOption(text: string): MaxErrorRate | 'off' {
  try {
    return parseMaxErrorRate(text);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function shardOption(text: string): Shard {
  try {
    return parseShard(text);
  } catch (error) {
    throw new UsageError(`--shard: ${(error as Error).message}`);
  }
}
