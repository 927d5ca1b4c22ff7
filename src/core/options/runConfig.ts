import { isAbsolute, resolve } from 'node:path';
import * as z from 'zod/mini';
import { EVALUATION_KINDS } from '../../api/evaluationKinds';
import { kindOf, specOf } from '../targets/kinds/index';
import { originOf } from '../targets/variableOwners';
import { flagsOfConfig } from '../targets/kinds/flags';
import { configTargetSchema, configTypesText } from '../targets/kinds/schemas';
import { secretReads, secretVariables } from '../targets/kinds/secretSources';
import { CLI_SETTING_NAMES, MAX_USD, RUN_SETTINGS, RUN_SETTING_NAMES, settingFlags } from './runSettings';
import type { ConfigScope, RunSetting, RunSettingName, RunSettingValue } from './runSettings';

/** A setting's schema in a config file, from its one definition: a number's range, a choice's values. */
function settingSchema(setting: RunSetting) {
  switch (setting.type) {
    case 'integer': {
      const int = z.int().check(z.gte(setting.min), z.lte(setting.max ?? Number.MAX_SAFE_INTEGER));
      // A settings block pasted whole may say null where the setting is unset by default.
      return z.optional(setting.default === undefined ? z.nullable(int) : int);
    }
    case 'boolean':
      return z.optional(z.boolean());
    case 'choice':
      return z.optional(z.enum(setting.values as [string, ...string[]]));
    case 'text':
      return z.optional(z.string());
    case 'decimal': {
      const amount = z.number().check(z.gte(setting.min), z.lte(setting.max));
      return z.optional(setting.default === undefined ? z.nullable(amount) : amount);
    }
    case 'prices': {
      const usd = z.number().check(z.gte(0), z.lte(MAX_USD));
      return z.optional(z.record(z.string().check(z.maxLength(200)), z.object({ input: usd, output: usd, cached: z.optional(usd) })));
    }
  }
}

/** As read, with null for a number unset by default. */
type ConfigValue<N extends RunSettingName> = Exclude<RunSettingValue<N>, undefined> | (undefined extends RunSettingValue<N> ? null : never);
type SettingsShape = { [N in RunSettingName]: z.ZodMiniOptional<z.ZodMiniType<ConfigValue<N>>> };

const settingsShape = Object.fromEntries(RUN_SETTING_NAMES.map((name) => [name, settingSchema(RUN_SETTINGS[name])])) as unknown as SettingsShape;

/**
 * A run's settings as a file (the CLI's `--config FILE`): the extension's settings, without the `evalRunner.` prefix, as a JSON file, so a run tried in
 * the editor moves to CI unchanged. It becomes flags placed before the command line's own, so every flag given
 * overrides it. Secrets are never read from it: keys, tokens and header values come from environment variables.
 */
const evaluation = z.object({
  evaluationId: z.int().check(z.positive()),
  kind: z.enum(EVALUATION_KINDS),
  label: z.optional(z.string()),
});
const configSchema = z.strictObject({
  $schema: z.optional(z.string()),
  baseUrl: z.optional(z.string()),
  evaluations: z.optional(z.array(evaluation)),
  target: z.optional(configTargetSchema()),
  // Every run setting; the editor's alone (no flag) are accepted, so a settings block can be pasted whole, and ignored.
  ...settingsShape,
});
/** What a config file holds, checked (the file's shape, not a run's options: those are RunOptions, after the flags). */
export type ConfigFile = z.infer<typeof configSchema>;

/**
 * The settings a config carries of these values: every one the CLI reads (it has a flag) that differs from its default
 * (`defaults` may say otherwise, as the editor's resolved state folder does). The editor-only ones stay out.
 */
export function configSettings(values: Partial<Record<RunSettingName, unknown>>, defaults: Partial<Record<RunSettingName, unknown>> = {}): Partial<ConfigFile> {
  // Compared as JSON: a table (prices) equal to its default is a new object all the same.
  const differs = (name: RunSettingName) => values[name] !== undefined && JSON.stringify(values[name]) !== JSON.stringify(name in defaults ? defaults[name] : RUN_SETTINGS[name].default);
  return Object.fromEntries(CLI_SETTING_NAMES.filter(differs).map((name) => [name, values[name]]));
}

/** A config that cannot be used: the words say why, never quoting a value. */
export class RunConfigError extends Error {
  override name = 'RunConfigError';
}

const SECRET_KEYS = /^(token|apiKey|api_key|key|password|secret|authorization)$/i;

/** Checks a parsed JSON value: refused when it holds a secret's key or does not fit the settings' shape. */
export function parseRunConfig(value: unknown, name: string): ConfigFile {
  const secret = findSecretKey(value);
  if (secret) {
    // The value itself is never quoted.
    throw new RunConfigError(`${name} holds "${secret}": secrets never go in the config file. Put it in an environment variable (EVAL_RUNNER_TOKEN, apiKeyEnv, headerEnv).`);
  }
  const parsed = configSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : '(top level)';
    throw new RunConfigError(`${name}: ${where}: ${describeIssue(issue)}`);
  }
  return parsed.data;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown setting ${issue.keys.map((k) => `"${k}"`).join(', ')} (the keys are the extension's settings without "evalRunner.")`;
  if (issue.path.join('.') === 'target.type') return configTypesText();
  if (issue.code === 'invalid_type') return `expected ${issue.expected}`;
  return issue.message;
}

function findSecretKey(value: unknown, path: string[] = []): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [k, v] of Object.entries(value)) {
    // Header maps name headers, queryEnv query parameters (key); their names may be anything. Only plain headers' values sit there, by design.
    if (SECRET_KEYS.test(k) && !['headers', 'headerEnv', 'queryEnv'].includes(path[path.length - 1]!)) return [...path, k].join('.');
    const inner = findSecretKey(v, [...path, k]);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * The config's paths read from `folder` (a config file's own): the same file means the same run from any working
 * folder, as a relative path in settings.json means the workspace's. The paths: stateDir, a python target's file,
 * and its interpreter when given as a path (a bare name such as python3.12 is looked up on PATH, as it was).
 */
export function resolveConfigPaths(config: ConfigFile, folder: string): ConfigFile {
  const at = (path: string) => (isAbsolute(path) ? path : resolve(folder, path));
  const t = config.target;
  return {
    ...config,
    ...(config.stateDir ? { stateDir: at(config.stateDir) } : {}),
    ...(t?.type === 'python' ? { target: { ...t, file: at(t.file), ...(t.python && /[\\/]/.test(t.python) ? { python: at(t.python) } : {}) } } : {}),
  };
}

/**
 * The config as flags, placed before the user's own (parseArgs keeps the last value, so flags given win).
 * The evaluation: the one given with --evaluation (its kind from the config unless --kind is given), or the
 * config's only one.
 */
export function configToArgs(config: ConfigFile, argv: readonly string[], scope: ConfigScope): string[] {
  const out: string[] = [];
  const flag = (name: string, value: string | number | undefined) => {
    if (value !== undefined) out.push(`--${name}`, String(value));
  };
  flag('base-url', config.baseUrl);
  const given = flagValue(argv, 'evaluation');
  const evaluations = config.evaluations ?? [];
  if (given === undefined) {
    if (evaluations.length > 1) {
      throw new RunConfigError(`The config lists ${evaluations.length} evaluations (${evaluations.map((e) => `${e.kind} ${e.evaluationId}`).join(', ')}): choose one with --evaluation ID.`);
    }
    if (evaluations[0]) {
      flag('evaluation', evaluations[0].evaluationId);
      flag('kind', evaluations[0].kind);
    }
  } else {
    const matching = evaluations.filter((e) => String(e.evaluationId) === given);
    if (matching.length === 1 && flagValue(argv, 'kind') === undefined) flag('kind', matching[0]!.kind);
  }
  // The settings in their order, each scope's after the wider ones: a command takes the flags up to its own scope.
  const scopes: ConfigScope[] = ['service', 'journal', 'run'];
  for (const name of RUN_SETTING_NAMES) {
    const setting: RunSetting = RUN_SETTINGS[name];
    if (scopes.indexOf(setting.scope ?? 'run') <= scopes.indexOf(scope)) out.push(...settingFlags(name, config[name]));
  }
  if (scope !== 'run') return out;
  if (config.target && flagValue(argv, 'target') === undefined) out.push(...flagsOfConfig(config.target));
  return out;
}

function flagValue(argv: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === `--${name}`) value = argv[i + 1];
    else if (a.startsWith(`--${name}=`)) value = a.slice(name.length + 3);
  }
  return value;
}

/** One argument as a POSIX shell reads it: bare when it is plainly safe, else single-quoted. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The environment variables a run of this config reads its secrets from (never their values). */
export function configSecrets(config: ConfigFile): string[] {
  const t = config.target;
  return ['EVAL_RUNNER_TOKEN', ...(t ? secretVariables(t, kindOf(t.type).secrets?.apiKey === true) : [])];
}

/**
 * `eval-runner run …` for this config: its flags, or `--config FILE` when the config lives in a file. A file's
 * variables are sent only once allowed: the line, made from the user's own settings, allows them, as CI has no
 * terminal to ask at, each to its endpoint's origin only (--allow-env NAME=ORIGIN), so a later change to the file's
 * URL cannot move them. The service's base URL is given on the line itself (not --allow-env EVAL_RUNNER_TOKEN): the
 * token then goes where the user chose, whatever a later change to the file says.
 */
export function runCommandLine(config: ConfigFile, configFile?: string): string {
  const t = config.target;
  const named = t && configFile ? secretReads(t, kindOf(t.type).secrets?.apiKey === true).filter((read) => !read.byDefault) : [];
  const spec = t && specOf(t);
  const origin = spec ? originOf(kindOf(spec.type).endpoint?.(spec) ?? '') : undefined;
  const allow = [...new Set(named.map((read) => read.variable))].flatMap((variable) => ['--allow-env', origin ? `${variable}=${origin}` : variable]);
  const service = config.baseUrl ? ['--base-url', config.baseUrl] : [];
  const args = configFile ? ['--config', configFile, ...service, ...allow] : configToArgs(config, [], 'run');
  return ['eval-runner', 'run', ...args].map(shellQuote).join(' ');
}
