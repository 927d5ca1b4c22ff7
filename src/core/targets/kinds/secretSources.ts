// Where a kind's secrets come from. The keys and flags that name them are declared once here and shared by the kinds
// that take them (openai, http); the values never pass through settings, a config file or argv.
import { OPENAI_API_ORIGIN } from '../openai/openaiTarget';
import { originOf, variableBoundTo } from '../variableOwners';
import type { FlagValues, KindFlag, KindKey } from './kind';
import { TargetConfigError } from './kind';
import { queryFromEnv, queryVariable } from '../http/querySecrets';
import type { QuerySources } from '../http/querySecrets';
import type { SecretSources, TargetSecrets } from './specs';

/** The model key's variable (the CLI's; the editor keeps the key in secret storage). */
export const API_KEY_ENV_KEY: KindKey = {
  name: 'apiKeyEnv',
  type: 'string',
  only: 'config',
  flag: 'api-key-env',
  arg: 'NAME',
  secretSource: true,
  description: `the environment variable holding the API key; without it, OPENAI_API_KEY is sent to ${OPENAI_API_ORIGIN} only (and ANTHROPIC_API_KEY, MISTRAL_API_KEY to their own APIs), and other endpoints get no key`,
};

/** Plain headers, and the names of those whose values are secret. */
export const HEADER_KEYS: readonly KindKey[] = [
  { name: 'headers', type: 'stringMap', secretSource: true, description: 'extra request headers, plain ones only: they show in settings and process lists' },
  {
    name: 'secretHeaders',
    type: 'stringList',
    secretSource: true,
    description: "names of headers whose values are secret: kept in the editor's secret storage per endpoint, read from environment variables by the CLI (headerEnv)",
  },
  { name: 'headerEnv', type: 'stringMap', only: 'config', secretSource: true, description: 'the environment variable of each secret header (default: its name, X-Api-Key → X_API_KEY)' },
];

export const HEADER_FLAGS: readonly KindFlag[] = [
  { flag: 'header', arg: "'Name: value'", multiple: true, description: 'an extra request header (repeatable; shows in process lists: put secrets in --header-env)' },
  { flag: 'header-env', arg: "'Name=VAR'", multiple: true, description: 'a header whose value is read from environment variable VAR (repeatable)' },
];

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function strings(value: FlagValues[string]): string[] {
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
}

/** --header 'Name: value' and --header-env 'Name=VAR' into the config's headers, secretHeaders and headerEnv. */
export function readHeaderFlags(values: FlagValues, into: SecretSources): void {
  for (const h of strings(values.header)) {
    const i = h.indexOf(':');
    // The value is not quoted back: it may be a secret someone put here anyway.
    if (i <= 0) throw new TargetConfigError(`--header must look like 'Name: value' (got one without a name and a colon).`);
    (into.headers ??= {})[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  for (const h of strings(values['header-env'])) {
    const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(h);
    if (!m) throw new TargetConfigError(`--header-env must look like 'Name=ENV_VAR' (got "${h}").`);
    (into.secretHeaders ??= []).push(m[1]!);
    (into.headerEnv ??= {})[m[1]!] = m[2]!;
  }
}

export function writeHeaderFlags(config: SecretSources, out: string[]): void {
  for (const [name, value] of Object.entries(config.headers ?? {})) out.push('--header', `${name}: ${value}`);
  for (const name of config.secretHeaders ?? []) out.push('--header-env', `${name}=${headerVariable(config, name)}`);
}

/** The environment variable a secret header is read from when headerEnv does not name one: X-Api-Key → X_API_KEY. */
export function headerVariable(config: SecretSources, header: string): string {
  return config.headerEnv?.[header] ?? header.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

/** Plain and secret headers as sent: names in lower case, secret values last (they win). */
export function sentHeaders(plain: Record<string, string> | undefined, secret: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of [...Object.entries(plain ?? {}), ...Object.entries(secret)]) out[name.toLowerCase()] = value.trim();
  return out;
}

export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name);
}

/** OpenAI's own API, the only endpoint OPENAI_API_KEY goes to unnamed. */
export function isOpenAiApi(url: string): boolean {
  try {
    return new URL(url).origin === OPENAI_API_ORIGIN;
  } catch {
    return false;
  }
}

/**
 * The CLI's source of secrets: environment variables. The model key: from the variable the user named, else
 * OPENAI_API_KEY for OpenAI's own API only (a key meant for one provider must not reach whatever endpoint a flag
 * points at: a local server, a proxy, a typo). Secret headers: each from its variable.
 */
export function secretsFromEnv(target: object, takesKey: boolean, env: NodeJS.ProcessEnv): { secrets: TargetSecrets; authHint?: string } {
  const config = target as SecretSources & { baseUrl?: string };
  const secret: Record<string, string> = {};
  for (const name of config.secretHeaders ?? []) {
    const variable = headerVariable(config, name);
    const value = env[variable]?.trim();
    if (!value) throw new TargetConfigError(`--header-env ${name}=${variable}: the environment variable ${variable} is not set.`);
    secret[name] = value;
  }
  const headers = sentHeaders(config.headers, secret);
  const query = queryFromEnv(config, env);
  if (!takesKey) return { secrets: { headers, ...(query ? { query } : {}) } };
  const { apiKey, authHint } = modelKeyFromEnv(config.apiKeyEnv, config.baseUrl ?? '', env);
  return { secrets: { ...(apiKey ? { apiKey } : {}), headers }, authHint };
}

function modelKeyFromEnv(named: string | undefined, baseUrl: string, env: NodeJS.ProcessEnv): { apiKey: string | undefined; authHint: string } {
  if (named) {
    const apiKey = env[named]?.trim();
    if (!apiKey) throw new TargetConfigError(`--api-key-env ${named}: the environment variable ${named} is not set.`);
    return { apiKey, authHint: `Check the key in ${named}.` };
  }
  const bound = defaultKeyVariable(baseUrl);
  if (bound) return { apiKey: env[bound]?.trim() || undefined, authHint: `Set ${bound}, or name the variable with --api-key-env NAME.` };
  return {
    apiKey: undefined,
    authHint: `No key was sent: OPENAI_API_KEY goes only to ${OPENAI_API_ORIGIN}. Name the variable holding this endpoint's key with --api-key-env NAME.`,
  };
}

/** The key's variable when none is named: the one a rule binds to the endpoint's origin (OPENAI_API_KEY for OpenAI's API). */
function defaultKeyVariable(baseUrl: string): string | undefined {
  return variableBoundTo(originOf(baseUrl));
}

/** Where a secret read from a variable goes: a request header, a query parameter, or the model key. */
export type SecretPlace = { readonly header: string } | { readonly query: string } | { readonly apiKey: true };

/** One variable a config reads a secret from, and where its value goes (never the value). */
export interface SecretRead {
  variable: string;
  place: SecretPlace;
  /** Named by no one: the variable a rule binds to the endpoint (OPENAI_API_KEY for OpenAI's API). */
  byDefault?: true;
}

/** Every (variable, place) a config reads: the model key's, then each secret header's and query parameter's. */
export function secretReads(target: object, takesKey: boolean): SecretRead[] {
  const config = target as SecretSources & QuerySources & { baseUrl?: string };
  const bound = takesKey && !config.apiKeyEnv ? defaultKeyVariable(config.baseUrl ?? '') : undefined;
  const key: SecretRead[] = config.apiKeyEnv && takesKey ? [{ variable: config.apiKeyEnv, place: { apiKey: true } }] : bound ? [{ variable: bound, place: { apiKey: true }, byDefault: true }] : [];
  const headers = (config.secretHeaders ?? []).map((header) => ({ variable: headerVariable(config, header), place: { header } }));
  return [...key, ...headers, ...(config.secretQuery ?? []).map((query) => ({ variable: queryVariable(config, query), place: { query } }))];
}

/** The environment variables a config reads secrets from (never their values). */
export function secretVariables(target: object, takesKey: boolean): string[] {
  return secretReads(target, takesKey).map((read) => read.variable);
}

/** The variables the secret flags name, whatever the kind: a command the user runs never sees them. */
export function flagSecretVariables(values: FlagValues): string[] {
  const named = (flag: string) => strings(values[flag]).map((h) => h.split('=')[1]?.trim() ?? '').filter(Boolean);
  return [...(typeof values['api-key-env'] === 'string' ? [values['api-key-env']] : []), ...named('header-env'), ...named('query-env')];
}
