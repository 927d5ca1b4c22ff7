/**
 * A target kind's descriptor: everything one kind of target is, in one place. The CLI's flags and help, the
 * `--config` file's schema, the editor's settings and Select Target entries, and package.json's
 * `evalRunner.target` schema are all derived from the descriptors in ./index.ts; nothing else lists a kind's keys.
 *
 * To add a key to a kind: add a KindKey to its `keys` (name, type, description; `flag` when the CLI takes it), add
 * it to the kind's spec type in ./specs.ts when it decides answers (and to `identity`), then run
 * `node scripts/targetSettings.mjs` to regenerate package.json's schema (a unit test fails until you do).
 */
import type { Target } from '../target';
import type { TargetConfig, TargetOptions, TargetSecrets, TargetSpec, TargetType } from './specs';

export type KeyType = 'string' | 'integer' | 'number' | 'boolean' | 'stringMap' | 'stringList';

/** One key of a kind, as settings, a config file and (with `flag`) the CLI's flags name it. */
export interface KindKey {
  /** Its name in `evalRunner.target` and a config file's `target`. */
  readonly name: string;
  readonly type: KeyType;
  readonly required?: true;
  /** Bounds of a number, checked on the flag and declared in the settings' schema. */
  readonly min?: number;
  readonly max?: number;
  /** An http:// or https:// URL. */
  readonly url?: true;
  /** The CLI flag (without the dashes); none: settings and config files only. */
  readonly flag?: string;
  /** How the help names the flag's value (URL, N). */
  readonly arg?: string;
  /** For people: the settings' description, and the flag's help. */
  readonly description: string;
  /** Written only in the editor's settings, or only in a config file (absent: both). */
  readonly only?: 'settings' | 'config';
  /** Where a secret comes from (not what decides answers): not part of the spec. */
  readonly secretSource?: true;
}

/** A CLI flag that is not one key (--header, --from-curl): declared here for the options and the help. */
export interface KindFlag {
  readonly flag: string;
  readonly arg?: string;
  readonly multiple?: true;
  readonly description: string;
}

/** The CLI's parsed flags (node:util parseArgs values). */
export type FlagValues = Readonly<Record<string, string | boolean | Array<string | boolean> | undefined>>;

/** A flag or setting that cannot be used: the words say why (never quoting a secret). */
export class TargetConfigError extends Error {
  override name = 'TargetConfigError';
}

/** What a kind says of a spec's identity; targetIdentity (../targetSpec.ts) hashes and shortens it. */
export interface IdentityParts {
  description: string;
  /** What changes answers, in order: hashed after the kind's type into the fingerprint. */
  parts: ReadonlyArray<string | number | undefined>;
  /** The same, named for people. */
  facts: Record<string, string | number | undefined>;
  /** Parts an earlier version hashed for the same target. */
  aliasParts?: ReadonlyArray<string | number | undefined>;
}

/** One entry of the editor's Select Target (its questions are the editor's, keyed by `id`). */
export interface KindPick {
  readonly id: string;
  readonly label: string;
  readonly description: string;
}

export type SpecOf<T extends TargetSpec['type']> = Extract<TargetSpec, { type: T }>;
export type ConfigOf<T extends TargetType> = Extract<TargetConfig, { type: T }>;

/** What every kind has, the editor's manual one included. */
export interface KindBase<T extends TargetType = TargetType> {
  readonly type: T;
  /** One line: the CLI's help and the settings' description of the kind. */
  readonly summary: string;
  readonly picks: readonly KindPick[];
  readonly keys: readonly KindKey[];
  /** Only the editor can run it (a VS Code chat model, manual answers): no flags, no config file. */
  readonly editorOnly?: true;
}

/** A kind that answers: its spec, secrets, identity, factory and warnings. */
export interface TargetKind<T extends TargetSpec['type'] = TargetSpec['type']> extends KindBase<T> {
  /** Flags that are not one key, and how they are read into the config and written from it. */
  readonly flags?: readonly KindFlag[];
  readFlags?(values: FlagValues, into: ConfigOf<T>): void;
  writeFlags?(config: ConfigOf<T>, out: string[]): void;
  /** Settings as the editor reads them, made regular (lenient: the core refuses a wrong value in words). */
  normalise?(config: ConfigOf<T>): ConfigOf<T>;
  /** Runs the user's programs here: they start in the working folder (CLI) or the workspace (editor), without the run's secret variables. */
  readonly localProcess?: true;
  /**
   * The secrets it takes, per origin of `endpoint`: a model key, and the values of secret headers. Where they come
   * from: in the CLI environment variables (apiKeyEnv, or OPENAI_API_KEY for OpenAI's own API; headerEnv), in the
   * editor its secret storage (asked for once). See ./secretSources.ts.
   */
  readonly secrets?: { readonly apiKey?: true; readonly headers?: true };
  endpoint?(spec: SpecOf<T>): string;
  identity(spec: SpecOf<T>, cwd: string | undefined): IdentityParts;
  create(spec: SpecOf<T>, secrets: TargetSecrets, options: TargetOptions): Target;
  /** Said once before a run (a credential about to cross a network in plain http). */
  warnings?(spec: SpecOf<T>, secrets: TargetSecrets): string[];
}

/** Declares a kind, checking its shape against its type. */
export function defineKind<T extends TargetSpec['type']>(kind: TargetKind<T>): TargetKind<T> {
  return kind;
}
