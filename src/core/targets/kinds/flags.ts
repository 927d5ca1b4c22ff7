// The CLI's target flags, both ways, derived from the kinds: flags → config (then spec and secrets) for a run, and
// config → flags for a config file and for "run this again" lines.
import { CLI_KINDS, kindOf } from './index';
import type { FlagValues, KindFlag, KindKey, TargetKind } from './kind';
import { TargetConfigError } from './kind';
import type { TargetConfig, TargetSpec } from './specs';

type CliConfig = Exclude<TargetConfig, { type: 'manual' | 'vscode-lm' }>;
export type CliTargetType = CliConfig['type'];

export const CLI_TARGET_TYPES = CLI_KINDS.map((k) => k.type) as readonly CliTargetType[];

function cliKeys(kind: { readonly keys: readonly KindKey[] }): KindKey[] {
  return kind.keys.filter((k) => k.flag !== undefined && k.only !== 'settings');
}

/** The options node:util parseArgs takes for every kind's flags (a flag two kinds share is declared once). */
export function targetFlagOptions(): Record<string, { type: 'string' | 'boolean'; multiple?: true }> {
  const out: Record<string, { type: 'string' | 'boolean'; multiple?: true }> = {};
  for (const kind of CLI_KINDS) {
    for (const key of cliKeys(kind)) out[key.flag!] = { type: key.type === 'boolean' ? 'boolean' : 'string' };
    for (const flag of kind.flags ?? []) out[flag.flag] = { type: 'string', ...(flag.multiple ? { multiple: true as const } : {}) };
  }
  return out;
}

/** The kind --target names, checked. */
export function cliKindOf(value: string | undefined): TargetKind {
  if (value === undefined) throw new TargetConfigError(`--target is required (${CLI_TARGET_TYPES.join(' or ')}).`);
  const kind = CLI_KINDS.find((k) => k.type === value);
  if (!kind) throw new TargetConfigError(`--target must be ${CLI_TARGET_TYPES.join(' or ')} (got "${value}").`);
  return kind;
}

/** A kind's flags read into its config (TargetConfigError on a missing or invalid one; the others' flags are ignored). */
export function configFromFlags(type: CliTargetType, values: FlagValues): CliConfig {
  const kind = kindOf(type);
  const config: Record<string, unknown> = { type };
  for (const key of cliKeys(kind)) {
    const value = readKey(key, values[key.flag!], type);
    if (value !== undefined) config[key.name] = value;
  }
  kind.readFlags?.(values, config as never);
  return config as CliConfig;
}

function readKey(key: KindKey, raw: FlagValues[string], type: string): unknown {
  const flag = key.flag!;
  if (key.type === 'boolean') return raw === true ? true : undefined;
  const text = typeof raw === 'string' ? raw : undefined;
  if (text === undefined || (key.type === 'string' && text === '')) {
    if (key.required) throw new TargetConfigError(`--${flag} is required with --target ${type}.`);
    return undefined;
  }
  if (key.type === 'integer') return wholeNumber(text, flag, key.min, key.max);
  if (key.type === 'number') return realNumber(text, flag, key.min, key.max);
  if (key.url && !isHttpUrl(text)) throw new TargetConfigError(`--${flag} must be an http:// or https:// URL.`);
  return text;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A flag's whole number, in its bounds (the words the CLI's own options use). */
export function wholeNumber(value: string, flag: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^-?\d+$/.test(value.trim())) throw new TargetConfigError(`--${flag} must be a whole number (got "${value}").`);
  const n = Number(value);
  if (n < min) throw new TargetConfigError(`--${flag} must be a whole number of at least ${min} (got ${n}).`);
  if (n > max) throw new TargetConfigError(`--${flag} must be a whole number of at most ${max} (got ${n}).`);
  return n;
}

export function realNumber(value: string, flag: string, min = 0, max = Number.MAX_VALUE): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new TargetConfigError(`--${flag} must be a number between ${min} and ${max} (got "${value}").`);
  return n;
}

/** The flags that make this config (or spec) again: `--target KIND` and each key's flag, in the kind's order. */
export function flagsOfConfig(config: CliConfig | Exclude<TargetSpec, { type: 'vscode-lm' }>): string[] {
  const kind = kindOf(config.type);
  const out = ['--target', config.type];
  const values = config as unknown as Record<string, unknown>;
  for (const key of cliKeys(kind)) {
    const value = values[key.name];
    if (value === undefined || value === false) continue;
    if (key.type === 'boolean') out.push(`--${key.flag!}`);
    else out.push(`--${key.flag!}`, typeof value === 'number' ? String(value) : (value as string));
  }
  kind.writeFlags?.(config, out);
  return out;
}

/** The flags' part of the CLI's help: each kind, its flags with their words, derived from the kinds. */
export function targetFlagsHelp(): string {
  const lines = ['Targets (--target):'];
  for (const kind of CLI_KINDS) {
    lines.push(...column(`  ${kind.type}`, kind.summary, 30));
    for (const key of cliKeys(kind)) lines.push(...column(`    --${key.flag!}${key.arg ? ` ${key.arg}` : ''}`, `${key.description}${key.required && !key.description.includes('(required') ? ' (required)' : ''}`, 32));
    for (const flag of kind.flags ?? []) lines.push(...column(flagTitle(flag), flag.description, 32));
  }
  return lines.join('\n');
}

function flagTitle(flag: KindFlag): string {
  return `    --${flag.flag}${flag.arg ? ` ${flag.arg}` : ''}`;
}

const WIDTH = 112;

/** A term and its words wrapped beside it (under it when the term is too long). */
export function column(term: string, words: string, at: number): string[] {
  const out: string[] = [];
  if (term.length >= at - 1) out.push(term);
  let line = term.length < at - 1 ? term.padEnd(at) : ' '.repeat(at);
  let empty = true;
  for (const word of words.split(' ')) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      out.push(line);
      line = ' '.repeat(at);
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  out.push(line);
  return out;
}
