import { readFileSync } from 'node:fs';
import { CurlError, OPENAI_API_ORIGIN, createTarget, fieldList, plainHttpWarning, readCurl, targetIdentity, withPromptAt } from '../core';
import type { CurlRequest, Target, TargetIdentity, TargetOptions, TargetSecrets, TargetSpec } from '../core';
import { choiceOption, intOption, numberOption } from './args';
import { UsageError } from './exitCodes';

export const TARGET_KINDS = ['echo', 'openai', 'http', 'command', 'python', 'worker'] as const;

export const TARGET_OPTIONS = {
  target: { type: 'string' },
  'target-timeout': { type: 'string' },
  'openai-base-url': { type: 'string' },
  model: { type: 'string' },
  'system-prompt': { type: 'string' },
  temperature: { type: 'string' },
  'max-tokens': { type: 'string' },
  'api-key-env': { type: 'string' },
  header: { type: 'string', multiple: true },
  'header-env': { type: 'string', multiple: true },
  'http-url': { type: 'string' },
  'from-curl': { type: 'string' },
  'prompt-path': { type: 'string' },
  'http-method': { type: 'string' },
  'body-template': { type: 'string' },
  'answer-path': { type: 'string' },
  'usage-path': { type: 'string' },
  stream: { type: 'boolean' },
  'sse-path': { type: 'string' },
  command: { type: 'string' },
  'python-file': { type: 'string' },
  'python-function': { type: 'string' },
  python: { type: 'string' },
  workers: { type: 'string' },
  'batch-size': { type: 'string' },
  'batch-wait-ms': { type: 'string' },
  'worker-command': { type: 'string' },
} as const;

export const TARGET_HELP = `Targets (--target):
  echo                        answers with the prompt itself
  openai                      an OpenAI-compatible chat-completions endpoint:
    --openai-base-url URL       e.g. https://api.openai.com/v1 (required)
    --model NAME                (required)
    --system-prompt TEXT, --temperature T, --max-tokens N
    --stream                    ask for the answer as server-sent events (stream: true); measures the
                                time to first token
    --api-key-env NAME          environment variable holding the API key; without it, OPENAI_API_KEY
                                is sent to https://api.openai.com only, and other endpoints get no key
  http                        your own JSON endpoint:
    --http-url URL              (required, or --from-curl)   --http-method M (default POST)
    --body-template JSON        {{prompt}} is replaced, JSON-escaped (default {"prompt": "{{prompt}}"})
    --from-curl FILE            the request as a curl command (bash or cmd, as DevTools, Postman or API docs
                                write it; - reads stdin) instead of --http-url, --http-method, --body-template:
                                {{prompt}} marks where the prompt goes; $NAME and \${NAME} (%NAME% in cmd) are
                                read from the environment, in headers and the URL's query only
    --prompt-path PATH          with --from-curl and no {{prompt}}: the body's string field that takes the
                                prompt, e.g. '$.messages[0].content'
    --answer-path PATH          e.g. choices.0.message.content, or RFC 9535 JSONPath such as
                                "$.output[0].content[?@.type=='text'].text" (required)
    --usage-path PATH           where the token usage is, e.g. usage (prompt_tokens, completion_tokens)
    --sse-path PATH             the endpoint streams server-sent events: where each event's piece is, e.g.
                                choices.0.delta.content (the answer is their concatenation; [DONE] ends it)
  command                     a shell command per prompt: prompt on stdin, answer on stdout
    --command CMD               (required; run by /bin/sh, or %ComSpec% on Windows)
  python                      a function in your Python file, called in long-lived workers that load the
                              module once: def answer(prompt) or def answer(prompt, context), async too,
                              returning a string or {"answer": str, "usage": {...}}
    --python-file FILE          (required)   --python-function NAME (default answer)
    --python EXE                the interpreter (default python3; py on Windows)
    --workers N                 worker processes (default: the concurrency, at most one per core)
    --batch-size N              a batch function: def answer(prompts, contexts) gets lists of up to N
                                and returns a list of answers, same length, same order (workers default
                                to the concurrency ÷ N: raise --concurrency to fill the batches)
    --batch-wait-ms MS          how long a prompt waits for its batch to fill (default 20)
  worker                      any long-lived command speaking the worker protocol (JSON lines, see README)
    --worker-command CMD        (required; started directly, without a shell)   --workers N
  --header 'Name: value'      extra request header for openai/http (repeatable; shows in process lists:
                                put secrets in --header-env)
  --header-env 'Name=VAR'     a header whose value is read from environment variable VAR (repeatable)
  --target-timeout SECONDS    per target call (default 600)`;

type TargetValues = {
  [K in keyof typeof TARGET_OPTIONS]?: (typeof TARGET_OPTIONS)[K] extends { multiple: true } ? string[] : (typeof TARGET_OPTIONS)[K] extends { type: 'boolean' } ? boolean : string;
};

function headers(v: TargetValues, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of v.header ?? []) {
    const i = h.indexOf(':');
    // The value is not quoted back: it may be a secret someone put here anyway.
    if (i <= 0) throw new UsageError(`--header must look like 'Name: value' (got one without a name and a colon).`);
    out[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  for (const h of v['header-env'] ?? []) {
    const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(h);
    if (!m) throw new UsageError(`--header-env must look like 'Name=ENV_VAR' (got "${h}").`);
    const value = env[m[2]!];
    if (!value) throw new UsageError(`--header-env ${m[1]}=${m[2]}: the environment variable ${m[2]} is not set.`);
    out[m[1]!.toLowerCase()] = value.trim();
  }
  return out;
}

/** The variables this run reads secrets from: a command target never sees them. */
function secretVariables(v: TargetValues): string[] {
  const fromHeaders = (v['header-env'] ?? []).map((h) => h.split('=')[1]?.trim() ?? '').filter(Boolean);
  return [...(v['api-key-env'] ? [v['api-key-env']] : []), ...fromHeaders];
}

/**
 * The model key: from the variable the user named, else OPENAI_API_KEY for OpenAI's own API only. A key
 * meant for one provider must not reach whatever endpoint a flag points at (a local server, a proxy, a typo).
 */
function openAiKey(v: TargetValues, baseUrl: string, env: NodeJS.ProcessEnv): { apiKey: string | undefined; authHint: string } {
  const named = v['api-key-env'];
  if (named) {
    const apiKey = env[named]?.trim();
    if (!apiKey) throw new UsageError(`--api-key-env ${named}: the environment variable ${named} is not set.`);
    return { apiKey, authHint: `Check the key in ${named}.` };
  }
  if (new URL(baseUrl).origin === OPENAI_API_ORIGIN) {
    return { apiKey: env.OPENAI_API_KEY?.trim() || undefined, authHint: 'Set OPENAI_API_KEY, or name the variable with --api-key-env NAME.' };
  }
  return {
    apiKey: undefined,
    authHint: `No key was sent: OPENAI_API_KEY goes only to ${OPENAI_API_ORIGIN}. Name the variable holding this endpoint's key with --api-key-env NAME.`,
  };
}

function httpUrl(value: string, flag: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new UsageError(`--${flag} must be an http:// or https:// URL.`);
}

function required(value: string | undefined, name: string, target: string): string {
  if (!value) throw new UsageError(`--${name} is required with --target ${target}.`);
  return value;
}

export interface CliTarget {
  target: Target;
  identity: TargetIdentity;
  timeoutMs: number;
  /** Said once before the run: a credential about to cross a network in plain http. */
  warnings: string[];
}

/** The flags as a target spec and its secrets: the core builds the target (createTarget), as for the editor. */
export function targetFromArgs(
  v: TargetValues,
  concurrency: number,
  env = process.env,
  onLog?: (level: 'info' | 'warn', message: string) => void,
): CliTarget {
  const kind = choiceOption(v.target, 'target', TARGET_KINDS);
  const timeoutMs = intOption(v['target-timeout'], 'target-timeout', 600, 1, 86_400) * 1000;
  const parts: TargetParts = { spec: { type: 'echo' }, secrets: {}, options: { connections: concurrency }, warnings: [] };
  SPEC_FROM_ARGS[kind](v, env, parts);
  if (onLog) parts.options.onLog = onLog;
  let target: Target;
  try {
    target = createTarget(parts.spec, parts.secrets, parts.options);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return { target, identity: targetIdentity(parts.spec, parts.options.cwd), timeoutMs, warnings: parts.warnings };
}

/** What the flags of one kind of target make: its spec, its secrets, how it is built, and warnings to print. */
interface TargetParts {
  spec: TargetSpec;
  secrets: TargetSecrets;
  options: TargetOptions;
  warnings: string[];
}

/** Per kind of target, its flags read into its parts (UsageError on a missing or invalid one). */
const SPEC_FROM_ARGS: Record<(typeof TARGET_KINDS)[number], (v: TargetValues, env: NodeJS.ProcessEnv, parts: TargetParts) => void> = {
  echo: () => undefined,
  openai: openAiParts,
  http: httpParts,
  command: (v, _env, parts) => {
    parts.spec = { type: 'command', command: required(v.command, 'command', 'command') };
    parts.options.withhold = secretVariables(v);
  },
  python: (v, _env, parts) => {
    parts.spec = {
      type: 'python',
      file: required(v['python-file'], 'python-file', 'python'),
      ...(v['python-function'] ? { function: v['python-function'] } : {}),
      ...(v.python ? { python: v.python } : {}),
      ...(v.workers !== undefined ? { workers: intOption(v.workers, 'workers', 1, 1, 256) } : {}),
      ...pythonBatchFlags(v),
    };
    parts.options.withhold = secretVariables(v);
    parts.options.cwd = process.cwd();
  },
  worker: (v, _env, parts) => {
    parts.spec = {
      type: 'worker',
      command: required(v['worker-command'], 'worker-command', 'worker'),
      ...(v.workers !== undefined ? { workers: intOption(v.workers, 'workers', 1, 1, 256) } : {}),
    };
    parts.options.withhold = secretVariables(v);
  },
};

/** --batch-size and --batch-wait-ms (which means nothing without a batch size). */
function pythonBatchFlags(v: TargetValues): { batchSize?: number; batchWaitMs?: number } {
  if (v['batch-size'] === undefined) {
    if (v['batch-wait-ms'] !== undefined) throw new UsageError('--batch-wait-ms goes with --batch-size N (a batch function).');
    return {};
  }
  // Their upper bounds are the core's (createTarget says them, as for the editor's settings).
  return {
    batchSize: intOption(v['batch-size'], 'batch-size', 1, 1),
    ...(v['batch-wait-ms'] !== undefined ? { batchWaitMs: intOption(v['batch-wait-ms'], 'batch-wait-ms', 20, 0) } : {}),
  };
}

function openAiParts(v: TargetValues, env: NodeJS.ProcessEnv, parts: TargetParts): void {
  const baseUrl = httpUrl(required(v['openai-base-url'], 'openai-base-url', 'openai'), 'openai-base-url');
  const { apiKey, authHint } = openAiKey(v, baseUrl, env);
  parts.spec = {
    type: 'openai',
    baseUrl,
    model: required(v.model, 'model', 'openai'),
    ...(v['system-prompt'] ? { systemPrompt: v['system-prompt'] } : {}),
    ...(v.temperature !== undefined ? { temperature: numberOption(v.temperature, 'temperature', 1, 0, 2) } : {}),
    ...(v['max-tokens'] !== undefined ? { maxTokens: intOption(v['max-tokens'], 'max-tokens', 0, 1) } : {}),
    ...(v.stream ? { stream: true } : {}),
  };
  const sent = headers(v, env);
  parts.secrets = { ...(apiKey ? { apiKey } : {}), headers: sent };
  parts.options.authHint = authHint;
  if (apiKey !== undefined || Object.keys(sent).length > 0) parts.warnings.push(...compact([plainHttpWarning(baseUrl, 'The model key')]));
}

function httpParts(v: TargetValues, env: NodeJS.ProcessEnv, parts: TargetParts): void {
  if (v['from-curl'] !== undefined) return curlParts(v, env, parts);
  if (v['prompt-path'] !== undefined) throw new UsageError('--prompt-path goes with --from-curl; with --http-url, write {{prompt}} in --body-template.');
  const url = httpUrl(required(v['http-url'], 'http-url', 'http'), 'http-url');
  parts.spec = {
    type: 'http',
    url,
    ...(v['http-method'] ? { method: v['http-method'] } : {}),
    ...(v['body-template'] ? { bodyTemplate: v['body-template'] } : {}),
    answerPath: required(v['answer-path'], 'answer-path', 'http'),
    ...(v['usage-path'] ? { usagePath: v['usage-path'] } : {}),
    ...(v['sse-path'] ? { ssePath: v['sse-path'] } : {}),
  };
  const sent = headers(v, env);
  parts.secrets = { headers: sent };
  if (Object.keys(sent).length > 0 || new URL(url).search !== '') parts.warnings.push(...compact([plainHttpWarning(url, "The HTTP target's headers and query")]));
}

/**
 * --from-curl: the request as a curl command. Its variables are read from the environment here and kept in
 * headers and the URL's query only, whose values the core never writes down (the identity shows neither).
 */
function curlParts(v: TargetValues, env: NodeJS.ProcessEnv, parts: TargetParts): void {
  const clash = (['http-url', 'http-method', 'body-template'] as const).find((flag) => v[flag] !== undefined);
  if (clash) throw new UsageError(`--from-curl gives the whole request: leave out --${clash}.`);
  const text = curlText(v['from-curl']!);
  checkVariables(text, env);
  const request = withCurlError(() => readCurl(text, { variable: (name) => env[name]!.trim() }));
  parts.spec = {
    type: 'http',
    url: request.url,
    method: request.method,
    bodyTemplate: curlTemplate(request, v['prompt-path']),
    answerPath: required(v['answer-path'], 'answer-path', 'http'),
    ...(v['usage-path'] ? { usagePath: v['usage-path'] } : {}),
    ...(v['sse-path'] ? { ssePath: v['sse-path'] } : {}),
  };
  parts.secrets = { headers: { ...request.headers, ...request.secretHeaders, ...headers(v, env) } };
  const unused = request.ignored.filter((name) => CONNECTION_OPTIONS.has(name));
  if (unused.length > 0) parts.warnings.push(`--from-curl: ${unused.join(', ')} changes how curl connects and is not used here: certificates are checked, and the proxy is HTTPS_PROXY's.`);
  if (Object.keys(parts.secrets.headers!).length > 0 || new URL(request.url).search !== '') {
    parts.warnings.push(...compact([plainHttpWarning(request.url, "The HTTP target's headers and query")]));
  }
}

/** curl options about the connection (not the request), which the run does not follow. */
const CONNECTION_OPTIONS = new Set(['-k', '--insecure', '-x', '--proxy', '-U', '--proxy-user', '--cacert', '--capath', '--cert', '-E', '--key', '--resolve']);

function curlText(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`--from-curl: cannot read ${file === '-' ? 'the standard input' : file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
}

/** Reads the command with its variables as written: each must be set, and be where its value stays secret. */
function checkVariables(text: string, env: NodeJS.ProcessEnv): void {
  const { variables } = withCurlError(() => readCurl(text));
  const misplaced = variables.find((x) => x.in === 'body' || x.in === 'url');
  if (misplaced) {
    throw new UsageError(
      `--from-curl: the variable ${misplaced.name} is in the ${misplaced.in === 'body' ? 'body' : "URL's address"}; variables are read only in headers and the URL's query, ` +
        'where their values are never written down. Move it to a header, or write the value in the file.',
    );
  }
  const missing = [...new Set(variables.map((x) => x.name))].filter((name) => !env[name]?.trim());
  if (missing.length > 0) {
    throw new UsageError(`--from-curl: the command uses ${missing.length === 1 ? 'the environment variable' : 'environment variables'} ${missing.join(', ')}, not set here. Set ${missing.length === 1 ? 'it' : 'them'} and run again.`);
  }
}

function withCurlError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof CurlError) throw new UsageError(`--from-curl: ${error.message}`);
    throw error;
  }
}

/** The body template: the command's own {{prompt}}, or the field --prompt-path names. */
function curlTemplate(request: CurlRequest, promptPath: string | undefined): string {
  if (request.body === undefined) throw new UsageError('--from-curl: the command sends no body; add one (-d or --json) with {{prompt}} where the prompt goes.');
  if (request.bodyTemplate !== undefined) {
    if (promptPath !== undefined) throw new UsageError('--from-curl: the command has {{prompt}} in its body already; leave out --prompt-path.');
    return request.bodyTemplate;
  }
  if (promptPath === undefined) {
    throw new UsageError(`--from-curl: the body has no {{prompt}}. Write {{prompt}} where the prompt goes, or name the field with --prompt-path. ${fieldList(request.promptFields)}`);
  }
  return withCurlError(() => withPromptAt(request, promptPath));
}

function compact(list: Array<string | undefined>): string[] {
  return list.filter((w): w is string => w !== undefined);
}
