import { readFileSync } from 'node:fs';
import { parseRunConfig, RunConfigError } from '../core';
import type { RunConfig } from '../core';
import { UsageError } from './exitCodes';

/** Reads `--config FILE` (see src/core/runConfig.ts); every problem is a usage error (exit 2). */
export function readConfigFile(path: string): RunConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read --config ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
  } catch (error) {
    throw new UsageError(`--config ${path} is not JSON: ${(error as Error).message}`);
  }
  try {
    return parseRunConfig(value, `--config ${path}`);
  } catch (error) {
    if (error instanceof RunConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** Takes `--config FILE` (or `--config=FILE`) out of argv: the file, and the rest. */
export function extractConfig(argv: readonly string[]): { path: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let path: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--config') {
      path = argv[++i];
      if (path === undefined) throw new UsageError('--config needs a file.');
    } else if (a.startsWith('--config=')) path = a.slice('--config='.length);
    else rest.push(a);
  }
  return { path, rest };
}
