import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  CurlError,
  RUN_OPTIONS,
  TargetConfigError,
  cliKindOf,
  configFromFlags,
  createBatchTarget,
  createTarget,
  curlQuery,
  fieldList,
  flagSecretVariables,
  originOf,
  readCurl,
  secretReads,
  secretsFromEnv,
  sentHeaders,
  specOf,
  targetFlagOptions,
  targetFlagsHelp,
  targetIdentity,
  withPromptAt,
} from '../core';
import type { BatchTarget, CurlRequest, FlagValues, SecretRead, Target, TargetIdentity, TargetKind, TargetOptions, TargetSecrets, TargetSpec } from '../core';
import { intOption } from './args';
import { UsageError } from './exitCodes';
import { ApprovalStore, approveFileUses, terminalAsker } from './allowedEnv';
import { checkOwners, curlReads, useLines } from './secretUses';
import { safeText } from './terminalText';
import type { NamingFile, SecretUse } from './secretUses';

// The target's flags and their help come from the core's kind descriptors (src/core/targets/kinds): a key added
// there is a flag here, in the help, and in a config file, without a line changed in this file.
export const TARGET_OPTIONS = {
  target: { type: 'string' },
  'target-timeout': { type: 'string' },
  'allow-env': { type: 'string', multiple: true },
  ...targetFlagOptions(),
} as const;

const TIMEOUT = RUN_OPTIONS.targetTimeoutSeconds;

// Built when shown (--help), not at every start: the kinds' help took a loaded machine's CLI some 28 ms to start.
export const targetHelp = (): string => `${targetFlagsHelp()}
  --target-timeout SECONDS    per target call (default ${TIMEOUT.default})
  --allow-env NAME[=ORIGIN]   send variable NAME where a --from-curl or --config file says: one the file names, or
                              one named here (--api-key-env, --header-env, --query-env) whose endpoint the file
                              chose (repeatable; at a terminal you are asked once per file and origin instead).
                              =ORIGIN (e.g. https://api.example.com; a bare host means https) allows that origin
                              only: prefer it where others can change the file (a pull request, CI). Never a
                              provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) to another origin.
                              EVAL_RUNNER_TOKEN goes to no target: it lets the --config file's baseUrl be the
                              service the token goes to`;

export interface CliTarget {
  target: Target;
  /** The Batch API side of an openai target run with --batch. */
  batch?: BatchTarget;
  identity: TargetIdentity;
  timeoutMs: number;
  /** Said once before the run: a credential about to cross a network in plain http. */
  warnings: string[];
}

/** Where the flags came from: the command line's own, and the config file whose flags were put before them. */
export interface FlagOrigins {
  own: FlagValues;
  config?: NamingFile;
}

/** The target the flags describe, its secrets read, not built yet: what it will send, and where. */
export interface TargetPlan {
  kind: TargetKind;
  parts: TargetParts;
  /** The endpoint's origin, where every secret goes (none for a kind without an endpoint). */
  origin?: string;
  /** Each variable read as a secret, where it goes, and the file that named it. */
  uses: SecretUse[];
  timeoutMs: number;
}

/** The core's words about a flag, as a usage error (exit 2). */
function usage<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof TargetConfigError || error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The flags as a target spec and its secrets (from the environment). A variable no target may read, or one bound
 * to another origin, is refused here, before any value is read.
 */
export function targetPlan(v: FlagValues, env: NodeJS.ProcessEnv = process.env, origins: FlagOrigins = { own: v }): TargetPlan {
  const kind = usage(() => cliKindOf(typeof v.target === 'string' ? v.target : undefined));
  const timeoutMs = intOption(v['target-timeout'] as string | undefined, 'target-timeout', TIMEOUT.default, TIMEOUT.min, TIMEOUT.max) * 1000;
  // Half the price is the Batch API's, which only the openai kind speaks: said, rather than a live run at full price.
  if ((v.batch !== undefined || v['batch-fallback'] !== undefined) && kind.type !== 'openai') throw new UsageError('--batch and --batch-fallback go with --target openai (the Batch API).');
  const parts = v['from-curl'] !== undefined && kind.type === 'http' ? curlParts(v, env, origins) : flagParts(kind, v, env, origins);
  return { kind, parts, ...(parts.origin ? { origin: parts.origin } : {}), uses: parts.uses, timeoutMs };
}

/** The core builds the target from the plan, as for the editor. */
export function targetFromPlan(plan: TargetPlan, v: FlagValues, concurrency: number, onLog?: (level: 'info' | 'warn', message: string) => void): CliTarget {
  const { kind, parts } = plan;
  const options: TargetOptions = { connections: concurrency, ...(parts.authHint ? { authHint: parts.authHint } : {}), ...(onLog ? { onLog } : {}) };
  if (kind.localProcess) {
    // The user's programs start here, and never see the variables this run reads secrets from.
    options.cwd = process.cwd();
    options.withhold = [...new Set([...flagSecretVariables(v), ...plan.uses.map((u) => u.variable)])];
  }
  const warnings = [...parts.warnings, ...(kind.warnings?.(parts.spec, parts.secrets) ?? [])];
  const target = usage(() => createTarget(parts.spec, parts.secrets, options));
  const batch = usage(() => createBatchTarget(parts.spec, parts.secrets, options));
  return { target, ...(batch ? { batch } : {}), identity: targetIdentity(parts.spec, options.cwd), timeoutMs: plan.timeoutMs, warnings };
}

/** What the flags of one kind of target make: its spec, its secrets, and warnings to print. */
interface TargetParts {
  spec: TargetSpec;
  secrets: TargetSecrets;
  authHint?: string;
  warnings: string[];
  origin?: string;
  uses: SecretUse[];
}

/**
 * Who named each read: a rule (by default), the command line, else `file` (the config file whose flags came first).
 * One the command line named is still the file's to allow when `originFile` chose where it goes.
 */
function usesOf(reads: readonly SecretRead[], origins: FlagOrigins, file = origins.config, originFile?: NamingFile): SecretUse[] {
  const own = new Set(flagSecretVariables(origins.own));
  return reads.map((read): SecretUse => {
    if (read.byDefault) return read;
    if (own.has(read.variable)) return originFile ? { ...read, file: originFile, originOnly: true } : read;
    return file ? { ...read, file } : read;
  });
}

/** The file that chose the endpoint: the config's, unless the command line gives the kind's URL flag itself. */
function endpointFile(kind: TargetKind, origins: FlagOrigins): NamingFile | undefined {
  const urlFlags = kind.keys.filter((key) => key.url && key.flag !== undefined).map((key) => key.flag!);
  return urlFlags.some((flag) => origins.own[flag] !== undefined) ? undefined : origins.config;
}

function flagParts(kind: TargetKind, v: FlagValues, env: NodeJS.ProcessEnv, origins: FlagOrigins): TargetParts {
  if (kind.type === 'http' && v['prompt-path'] !== undefined) throw new UsageError('--prompt-path goes with --from-curl; with --http-url, write {{prompt}} in --body-template.');
  const config = usage(() => configFromFlags(kind.type as Parameters<typeof configFromFlags>[0], v));
  const spec = specOf(config)!;
  const origin = originOf(kind.endpoint?.(spec) ?? '');
  const uses = kind.secrets ? usesOf(secretReads(config, kind.secrets.apiKey === true), origins, origins.config, endpointFile(kind, origins)) : [];
  if (origin) checkOwners(uses, origin);
  const { secrets, authHint } = kind.secrets ? usage(() => secretsFromEnv(config, kind.secrets?.apiKey === true, env)) : { secrets: {}, authHint: undefined };
  return { spec, secrets, ...(authHint ? { authHint } : {}), warnings: [], ...(origin ? { origin } : {}), uses };
}

/**
 * --from-curl: the request as a curl command. Its variables are read from the environment here and kept in
 * headers and the URL's query only, whose values the core never writes down (the identity shows neither).
 */
function curlParts(v: FlagValues, env: NodeJS.ProcessEnv, origins: FlagOrigins): TargetParts {
  const clash = (['http-url', 'http-method', 'body-template'] as const).find((flag) => v[flag] !== undefined);
  if (clash) throw new UsageError(`--from-curl gives the whole request: leave out --${clash}.`);
  const path = String(v['from-curl']);
  const text = curlText(path);
  const written = checkPlaces(text);
  const origin = originOf(written.url);
  const file: NamingFile = { flag: '--from-curl', path: path === '-' ? '- (the standard input)' : path, sha256: createHash('sha256').update(text).digest('hex') };
  const flagConfig = usage(() => configFromFlags('http', { ...v, 'http-url': written.url, 'http-method': written.method, 'body-template': '{}' }));
  const reads = withCurlError(() => curlReads(text));
  checkAllRead(written, reads);
  // The curl file chose the origin of every variable, the command line's too.
  const uses = [...usesOf(reads, origins, file, file), ...usesOf(secretReads(flagConfig, false), origins, origins.config, file)];
  if (origin) checkOwners(uses, origin);
  checkSet(written, env);
  const request = withCurlError(() => readCurl(text, { variable: (name) => env[name]!.trim() }));
  // The rest of the http target's flags (--answer-path, --header, ...) read as for --http-url.
  const bodyTemplate = curlTemplate(request, typeof v['prompt-path'] === 'string' ? v['prompt-path'] : undefined);
  const config = usage(() => configFromFlags('http', { ...v, 'http-url': request.url, 'http-method': request.method, 'body-template': bodyTemplate }));
  const fromFlags = usage(() => secretsFromEnv(config, false, env)).secrets;
  const secrets = { headers: { ...sentHeaders(request.headers, request.secretHeaders), ...fromFlags.headers }, ...curlQuery(config, request.secretQuery, fromFlags.query) };
  const unused = request.ignored.filter((name) => CONNECTION_OPTIONS.has(name));
  const warnings = unused.length > 0 ? [`--from-curl: ${unused.join(', ')} changes how curl connects and is not used here: certificates are checked, and the proxy is HTTPS_PROXY's.`] : [];
  return { spec: specOf(config)!, secrets, warnings, ...(origin ? { origin } : {}), uses };
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

/** The command with its variables as written: each must be where its value stays secret. */
function checkPlaces(text: string): CurlRequest {
  const written = withCurlError(() => readCurl(text));
  const misplaced = written.variables.find((x) => x.in === 'body' || x.in === 'url');
  if (misplaced) {
    throw new UsageError(
      `--from-curl: the variable ${misplaced.name} is in the ${misplaced.in === 'body' ? 'body' : "URL's address"}; variables are read only in headers and the URL's query, ` +
        'where their values are never written down. Move it to a header, or write the value in the file.',
    );
  }
  return written;
}

/**
 * Fails closed: a variable the reader substitutes but the check of owners did not find (in a header's name, the
 * method, a query parameter's name) would be sent unchecked, so the command is refused.
 */
function checkAllRead(written: CurlRequest, reads: readonly SecretRead[]): void {
  const unchecked = written.variables.find((x) => !reads.some((r) => r.variable === x.name));
  if (unchecked) {
    throw new UsageError(
      `--from-curl: the variable ${unchecked.name} is where its value cannot be checked (a header's name, the method or a query parameter's name); ` +
        "variables are read only in header values and the URL's query values. Write that part of the command as text.",
    );
  }
}

/** Each of the command's variables is set. */
function checkSet(written: CurlRequest, env: NodeJS.ProcessEnv): void {
  const missing = [...new Set(written.variables.map((x) => x.name))].filter((name) => !env[name]?.trim());
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

/**
 * The target's plan, its secrets' owners checked and each file's variables allowed (asked at a terminal), then said
 * on stderr, one line per variable: all before anything is sent. `own`: the flags the user typed; `configFile`: the
 * config file whose flags came first, if any.
 */
export async function allowedTargetPlan(v: FlagValues, own: FlagValues, configFile: NamingFile | undefined): Promise<TargetPlan> {
  const plan = targetPlan(v, process.env, { own, ...(configFile ? { config: configFile } : {}) });
  if (!plan.origin || plan.uses.length === 0) return plan;
  const allowEnv = [own['allow-env'] ?? []].flat().map(String);
  const ask = terminalAsker();
  await approveFileUses(plan.uses, plan.origin, { allowEnv, store: new ApprovalStore(), ...(ask ? { ask } : {}) });
  for (const line of useLines(plan.uses, plan.origin)) process.stderr.write(`${safeText(line)}\n`);
  return plan;
}
