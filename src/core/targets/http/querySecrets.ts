// Secrets in a URL's query (Gemini's ?key=…, Azure Functions' ?code=…, a signed URL's sig=…): the http target
// names the parameters (secretQuery) and gets their values apart (TargetSecrets.query), added to the URL only as a
// request is sent. The spec's url, settings, config files, the journal and every export hold the names only.
import type { FlagValues, KindFlag, KindKey } from '../kinds/kind';
import { TargetConfigError } from '../kinds/kind';

/** Where a query secret's name and variable are written: the http target's config. */
export interface QuerySources {
  url?: string;
  secretQuery?: string[];
  queryEnv?: Record<string, string>;
}

export const QUERY_KEYS: readonly KindKey[] = [
  {
    name: 'secretQuery',
    type: 'stringList',
    description: "names of URL query parameters whose values are secret (e.g. key): kept in the editor's secret storage per endpoint, read from environment variables by the CLI (queryEnv); never in the url",
  },
  { name: 'queryEnv', type: 'stringMap', only: 'config', secretSource: true, description: 'the environment variable of each secret query parameter (default: its name, api_key → API_KEY)' },
];

export const QUERY_FLAGS: readonly KindFlag[] = [
  { flag: 'query-env', arg: "'key=VAR'", multiple: true, description: "a URL query parameter whose value is read from environment variable VAR (repeatable): added to the URL as each request is sent, never written down" },
];

// A query parameter's name: what URLSearchParams would give back, without '=', '&' or '#'.
// No control characters: a name is shown on the terminal, and must not be able to redraw it.
const QUERY_NAME = /^[^=&#\s\x00-\x1f\x7f]+$/;

/** --query-env 'key=VAR' into the config's secretQuery and queryEnv. */
export function readQueryFlags(values: FlagValues, into: QuerySources): void {
  const given = values['query-env'];
  for (const q of Array.isArray(given) ? given.map(String) : typeof given === 'string' ? [given] : []) {
    const m = /^\s*([^=&#\s]+)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(q);
    if (!m) throw new TargetConfigError(`--query-env must look like 'key=ENV_VAR' (got "${q}").`);
    into.secretQuery = [...new Set([...(into.secretQuery ?? []), m[1]!])];
    (into.queryEnv ??= {})[m[1]!] = m[2]!;
  }
}

export function writeQueryFlags(config: QuerySources, out: string[]): void {
  for (const name of config.secretQuery ?? []) out.push('--query-env', `${name}=${queryVariable(config, name)}`);
}

/** The environment variable a secret query parameter is read from when queryEnv does not name one: api_key → API_KEY. */
export function queryVariable(config: QuerySources, name: string): string {
  return config.queryEnv?.[name] ?? name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

/** The variables of the secret query parameters (never their values). */
export function queryVariables(config: QuerySources): string[] {
  return (config.secretQuery ?? []).map((name) => queryVariable(config, name));
}

/** The CLI's query secrets: each parameter's value from its variable, refused in words when it is not set. */
export function queryFromEnv(config: QuerySources, env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  if (!config.secretQuery?.length) return undefined;
  const out: Record<string, string> = {};
  for (const name of config.secretQuery) {
    const variable = queryVariable(config, name);
    const value = env[variable]?.trim();
    if (!value) throw new TargetConfigError(`--query-env ${name}=${variable}: the environment variable ${variable} is not set.`);
    out[name] = value;
  }
  return out;
}

/** Checks the names (a config file's or settings' secretQuery); the url must not carry them itself. */
export function checkSecretQuery(config: QuerySources): void {
  for (const name of config.secretQuery ?? []) {
    if (!QUERY_NAME.test(name)) throw new TargetConfigError(`secretQuery: "${name.slice(0, 40)}" is not a URL query parameter's name.`);
  }
}

/** The URL a request goes to: the spec's, with each secret parameter set to its value (added at send time only). */
export function sentUrl(url: string, query: Readonly<Record<string, string>> | undefined): string {
  if (!query || Object.keys(query).length === 0) return url;
  const u = new URL(url);
  for (const [name, value] of Object.entries(query)) u.searchParams.set(name, value);
  return u.href;
}

/** The URL as shown and compared: the spec's, with the secret parameters named (their values never known here). */
export function namedUrl(url: string, names: readonly string[] | undefined): string {
  return sentUrl(url, Object.fromEntries((names ?? []).map((n) => [n, ''])));
}

/**
 * Query parameters whose name says they carry a credential: key, api_key, apikey, token, access_token, sig,
 * signature, secret, password, code (Azure Functions' key), auth, session, jwt. What a literal value there is
 * moved from a URL to secret storage by.
 */
const SECRET_QUERY_NAME = /^(key|sig|code|pwd|pass|auth|jwt|sid|signature)$|api[-_]?key|token|secret|passw|session|credential|[-_]key$|^key[-_]/i;

export function looksSecretQueryName(name: string): boolean {
  return SECRET_QUERY_NAME.test(name);
}

/**
 * A curl command's secret query parameters joined to the config's (--query-env's win): their names go into the
 * config (the spec shows them, by name), their values apart, for the target's secrets.
 */
export function curlQuery(target: object, fromCurl: Readonly<Record<string, string>>, fromFlags: Readonly<Record<string, string>> | undefined): { query?: Record<string, string> } {
  const query = { ...fromCurl, ...fromFlags };
  if (Object.keys(query).length === 0) return {};
  const config = target as QuerySources;
  config.secretQuery = [...new Set([...(config.secretQuery ?? []), ...Object.keys(query)])];
  return { query };
}
