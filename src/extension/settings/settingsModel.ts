import { proxyFromEnv } from '../../api/proxy';
import { configSettings, defaultStateDir as cliStateDir, isOpenAiApi, kindOf, looksSecretHeader, readRunSettings, settingsTarget, splitSecretQuery } from '../../core';
import type { ConfigFile, RunSettingValues, TargetConfig } from '../../core';
import type { ProxyConfig } from '../../api/proxy';
import { isEvaluationId, isEvaluationKind } from '../../api/evaluationKinds';
import type { EvaluationKind } from '../../api/evaluationKinds';

// No vscode import here: the rules of what settings mean (and which a workspace may set) are tested on Node.

export interface ConfiguredEvaluation {
  evaluationId: number;
  kind: EvaluationKind;
  label?: string;
}

/** `evalRunner.target`: a kind's keys as its descriptor in the core declares them (src/core/targets/kinds). */
export type TargetSettings = TargetConfig;

/** The settings as a run reads them: each run setting as RUN_SETTINGS defines it (src/core/options/runSettings.ts). */
export interface Settings extends Omit<RunSettingValues, 'maxRequestsPerMinute'> {
  baseUrl: string;
  evaluations: ConfiguredEvaluation[];
  target: TargetSettings;
  /** Where journals live: the CLI's folder unless set. */
  stateDir: string;
  /** A cap on target requests per minute; undefined: learned from the endpoint. */
  maxRequestsPerMinute: number | undefined;
}

/**
 * Settings a cloned repository must not set in an untrusted workspace: where the token goes, what runs and
 * how much it costs, whether a person reviews answers before they go, and what the editor opens. They come
 * from user settings there (package.json lists the same keys as restrictedConfigurations; a test checks).
 */
export const RESTRICTED_SETTINGS = [
  'baseUrl',
  'target',
  'processDetailsUrl',
  'onTargetError',
  'reviewBeforeSubmit',
  'concurrency',
  'waitForGenerationSeconds',
  'stateDir',
  'maxRequestsPerMinute',
  'skippedAnswer',
  // How long a run waits and retries, whether it outlives the window, and the list's guard: a workspace's own
  // settings could otherwise keep a run going, multiply its calls or lift the guard.
  'keepRunsAlive',
  'targetRetries',
  'maxErrorRate',
  'servicePatience',
  'maxListMegabytes',
  // What a run may spend and what it costs: a workspace could otherwise lift the user's budget or cheapen its prices.
  'budgetUsd',
  'prices',
  'estimateThresholdUsd',
  // Which local port the sandbox takes: a workspace's value could point it at another local service's.
  'sandbox.port',
] as const;

/** What settings.ts reads from VS Code: the effective value, and the user's own (global) value. */
export interface SettingValues {
  effective(key: string): unknown;
  user(key: string): unknown;
}

/** The settings in effect: a run setting brought into its range, or its default, as the CLI's flags are (RUN_SETTINGS). */
export function resolveSettings(values: SettingValues, trusted: boolean, defaultStateDir: string): Settings {
  const restricted = new Set<string>(RESTRICTED_SETTINGS);
  const get = (key: string): unknown => (trusted || !restricted.has(key) ? values.effective(key) : values.user(key));
  const run = readRunSettings(get);
  const baseUrl = get('baseUrl');
  return {
    ...run,
    baseUrl: (typeof baseUrl === 'string' ? baseUrl : '').trim().replace(/\/+$/, ''),
    evaluations: readEvaluations(get('evaluations')),
    target: settingsTarget(get('target')),
    stateDir: run.stateDir.trim() || defaultStateDir,
    maxRequestsPerMinute: run.maxRequestsPerMinute || undefined,
  };
}

export function readEvaluations(value: unknown): ConfiguredEvaluation[] {
  if (!Array.isArray(value)) return [];
  const out: ConfiguredEvaluation[] = [];
  for (const v of value as Array<Record<string, unknown>>) {
    if (v && isEvaluationId(v.evaluationId) && isEvaluationKind(v.kind)) {
      out.push({ evaluationId: v.evaluationId, kind: v.kind, ...(typeof v.label === 'string' ? { label: v.label } : {}) });
    }
  }
  return out;
}

/**
 * The service's Process Details page for an evaluation, or why it cannot be opened. Only http(s) on the base
 * URL's own origin: openExternal hands file: and custom schemes to the operating system, and a template such
 * as https://elsewhere/?u={baseUrl} would tell another host where the service is.
 */
export function processDetailsUrl(
  template: string,
  baseUrl: string,
  evaluationId: number,
  kind: EvaluationKind,
): { url: string } | { problem: string } {
  const text = template.replace(/\{baseUrl\}/g, baseUrl).replace(/\{evaluationId\}/g, String(evaluationId)).replace(/\{kind\}/g, kind);
  let url: URL;
  let base: URL;
  try {
    url = new URL(text);
    base = new URL(baseUrl);
  } catch {
    return { problem: `evalRunner.processDetailsUrl does not make a valid URL ("${text.slice(0, 200)}").` };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== base.origin) {
    return { problem: `evalRunner.processDetailsUrl must lead to the service itself (${base.origin}), over http(s); it leads to ${url.protocol}//${url.host}.` };
  }
  return { url: url.href };
}

/** VS Code's own proxy settings (the `http` section), as the user set them. */
export interface EditorProxyValues {
  proxy?: unknown;
  noProxy?: unknown;
  proxyAuthorization?: unknown;
  proxyStrictSSL?: unknown;
  proxySupport?: unknown;
}

/**
 * The proxy for the service and model endpoints in the editor: VS Code's http.proxy (with http.noProxy,
 * http.proxyAuthorization, http.proxyStrictSSL), else the environment's HTTPS_PROXY / HTTP_PROXY / NO_PROXY,
 * as VS Code itself falls back; null when http.proxySupport is "off" or none is set. Callers pass user
 * settings only: a workspace must not be able to route the token through a proxy of its choosing.
 */
export function editorProxy(values: EditorProxyValues, env: NodeJS.ProcessEnv): ProxyConfig | null {
  if (values.proxySupport === 'off') return null;
  const fromEnv = proxyFromEnv(env);
  const proxy = typeof values.proxy === 'string' && values.proxy.trim() ? values.proxy.trim() : undefined;
  const base = proxy ? { httpProxy: proxy, httpsProxy: proxy } : fromEnv;
  if (!base) return null;
  const listed = Array.isArray(values.noProxy) ? values.noProxy.filter((h): h is string => typeof h === 'string' && h.trim() !== '') : [];
  const noProxy = [...listed, ...(fromEnv?.noProxy ? [fromEnv.noProxy] : [])].join(',');
  return {
    ...(base.httpProxy ? { httpProxy: base.httpProxy } : {}),
    ...(base.httpsProxy ? { httpsProxy: base.httpsProxy } : {}),
    ...(noProxy ? { noProxy } : {}),
    ...(typeof values.proxyAuthorization === 'string' && values.proxyAuthorization ? { authorization: values.proxyAuthorization } : {}),
    ...(values.proxyStrictSSL === false ? { strictSSL: false } : {}),
  };
}

/**
 * The run the editor would make, as a CLI config (see src/core/options/runConfig.ts): the evaluation, the target and
 * the settings that differ from the defaults; secrets only as the names of the variables to hold them.
 */
export function runConfigFor(
  ref: { baseUrl: string; evaluationId: number; kind: EvaluationKind; label: string },
  settings: Settings,
  keyless: boolean,
): ConfigFile | { problem: string } {
  const t = settings.target;
  if (t.type === 'manual' || t.type === 'vscode-lm') {
    return { problem: `The ${t.type === 'manual' ? 'manual' : 'VS Code chat model'} target exists only in the editor: Select Target picks one the CLI can run.` };
  }
  // A model key for another endpoint than OpenAI's own comes from a variable the CLI must be told.
  const namedKey = kindOf(t.type).secrets?.apiKey && !keyless && t.type === 'openai' && !isOpenAiApi(t.baseUrl);
  // A credential still written in the settings goes by name too: the CLI reads it from its variable (configSecrets).
  const named = (movedSettingsSecrets(t)?.target ?? t) as typeof t;
  const target: ConfigFile['target'] = namedKey && named.type === 'openai' ? { ...named, apiKeyEnv: 'MODEL_API_KEY' } : named;
  return {
    baseUrl: ref.baseUrl,
    evaluations: [{ evaluationId: ref.evaluationId, kind: ref.kind, label: ref.label }],
    target,
    // Every setting the CLI reads that differs from its default; the editor's state folder is the CLI's unless set.
    ...configSettings(settings, { stateDir: cliStateDir() }),
  };
}

/** A literal credential found in the settings' target, taken out: the target keeps names, the values go to secret storage. */
export interface MovedSecrets {
  target: TargetSettings;
  origin: string;
  headers: Record<string, string>;
  query: Record<string, string>;
}

/**
 * The credentials written as plain values in an http or openai target's settings: a header whose name or value
 * looks like one (authorization, *key*, *token*, a Bearer or sk-… value) becomes a secret header, and a key in an
 * http URL's query (key, api_key, token, sig, …) a secret query parameter. undefined: there is none.
 */
export function movedSettingsSecrets(target: TargetSettings): MovedSecrets | undefined {
  if (target.type !== 'http' && target.type !== 'openai') return undefined;
  let origin: string;
  try {
    origin = new URL(target.type === 'http' ? target.url : target.baseUrl).origin;
  } catch {
    return undefined; // an invalid URL is refused in words when the target is built
  }
  const plain = Object.entries(target.headers ?? {});
  const headers = Object.fromEntries(plain.filter(([name, value]) => typeof value === 'string' && looksSecretHeader(name, value)));
  const split = target.type === 'http' ? splitSecretQuery(target.url, []) : { url: '', secretQuery: {} };
  if (Object.keys(headers).length === 0 && Object.keys(split.secretQuery).length === 0) return undefined;
  const kept = Object.fromEntries(plain.filter(([name]) => !(name in headers)));
  const { headers: _old, ...rest } = target;
  const moved: TargetSettings = {
    ...rest,
    ...(Object.keys(kept).length > 0 ? { headers: kept } : {}),
    ...(Object.keys(headers).length > 0 ? { secretHeaders: [...new Set([...(target.secretHeaders ?? []), ...Object.keys(headers)])] } : {}),
    ...(target.type === 'http' && Object.keys(split.secretQuery).length > 0
      ? { url: split.url, secretQuery: [...new Set([...(target.secretQuery ?? []), ...Object.keys(split.secretQuery)])] }
      : {}),
  };
  return { target: moved, origin, headers, query: split.secretQuery };
}
