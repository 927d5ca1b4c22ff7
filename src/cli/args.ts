import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { UsageError } from './exitCodes';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Strict parsing: unknown options and stray positionals are usage errors, never ignored. */
export function parseCommandArgs<T extends OptionSpec>(argv: string[], options: T) {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false })
      .values;
  } catch (error) {
    const message = (error as Error).message.replace(/^TypeError \[\w+\]: /, '');
    const unknown = /^Unknown option '--([^'=]+)'/.exec(message)?.[1];
    const near = unknown === undefined ? undefined : nearest(unknown, Object.keys(options));
    throw new UsageError(near ? `Unknown option '--${unknown}': did you mean --${near}?` : message);
  }
}

/** The option a mistyped name was meant to be: within two edits (a typo, a letter missing or doubled), or none. */
export function nearest(name: string, options: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const option of options) {
    const d = editDistance(name, option);
    if (d < bestDistance) [best, bestDistance] = [option, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

const NEGATIVE_NUMBER = /^-(\d|\.\d)/;

/**
 * `--concurrency -3` as `--concurrency=-3`: parseArgs calls a value that starts with a dash "ambiguous", so the
 * option's own check (a whole number of at least 1) never got to say what is wrong. Only numbers are joined: a
 * missing value followed by the next option stays an error.
 */
function joinNegativeValues(argv: readonly string[], options: OptionSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    const takesValue = a.startsWith('--') && options[a.slice(2)]?.type === 'string';
    if (takesValue && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

export function intOption(value: string | undefined, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value.trim())) throw new UsageError(`--${name} must be a whole number (got "${value}").`);
  const n = Number(value);
  if (n < min) throw new UsageError(`--${name} must be a whole number of at least ${min} (got ${n}).`);
  if (n > max) throw new UsageError(`--${name} must be a whole number of at most ${max} (got ${n}).`);
  return n;
}

export function numberOption(value: string | undefined, name: string, fallback: number, min = 0, max = Number.MAX_VALUE): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a number between ${min} and ${max} (got "${value}").`);
  }
  return n;
}

export function choiceOption<C extends string>(value: string | undefined, name: string, choices: readonly C[], fallback?: C): C {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required (${choices.join(' or ')}).`);
    return fallback;
  }
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be ${choices.join(' or ')} (got "${value}").`);
  }
  return value as C;
}
