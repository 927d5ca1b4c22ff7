// The service token goes wherever the service's base URL points. A base URL the person running the CLI gave
// (--base-url, or EVAL_RUNNER_BASE_URL in their own environment) is theirs. One a --config file gives (a pull
// request's, checked out by CI) steers the token as a variable named by a file would, and is allowed the same way
// (allowedEnv.ts): asked once at a terminal, remembered per file content and origin; with no terminal, refused
// unless the command line gives --base-url or --allow-env EVAL_RUNNER_TOKEN (=ORIGIN: that origin only).
// Loopback gets no exemption: a port on this machine may be another user's listener.
import { SERVICE_TOKEN_ENV, originOf } from '../core';
import { ApprovalStore, approveFile, terminalAsker } from './allowedEnv';
import type { ApprovalOptions } from './allowedEnv';
import { parseCommandArgs } from './args';
import type { OptionSpec } from './args';
import type { ConfigFlags } from './configFile';
import { allowedByFlag, parseAllowEnv } from './envAllowance';
import { originText } from './secretUses';
import type { NamingFile } from './secretUses';

/** For the commands that send the token but take no target (prompts, submit); run has --allow-env already. */
export const TOKEN_ORIGIN_OPTIONS = { 'allow-env': { type: 'string', multiple: true } } as const;

export const TOKEN_ORIGIN_HELP = `  --allow-env EVAL_RUNNER_TOKEN[=ORIGIN]
                              send the token to the service a --config file's baseUrl names (at a terminal you
                              are asked once per file and origin instead); =ORIGIN (a bare host means https)
                              allows that origin only; --base-url given here needs nothing`;

/** The flags that decide where the token goes. */
export interface TokenOriginValues {
  'base-url'?: string;
  'allow-env'?: string[];
}

/** Where the token goes, as the target variables' lines say theirs. */
export function tokenLine(baseUrl: string): string {
  return `${SERVICE_TOKEN_ENV} → ${originText(originOf(baseUrl) ?? baseUrl)}, as the service token`;
}

/** The command line's own values: argv without the config file's flags, which were put before them. */
export function ownValues<T extends OptionSpec>(argv: readonly string[], config: ConfigFlags | undefined, options: T): ReturnType<typeof parseCommandArgs<T>> {
  return parseCommandArgs(argv.slice(config?.count ?? 0), options);
}

/**
 * The config file that chose the base URL in use, if one did: none when --base-url is on the command line, when the
 * file names no base URL (EVAL_RUNNER_BASE_URL is used), or when the user's own EVAL_RUNNER_BASE_URL names the
 * same origin.
 */
export function baseUrlFile(v: TokenOriginValues, own: TokenOriginValues, config: ConfigFlags | undefined, env: NodeJS.ProcessEnv = process.env): NamingFile | undefined {
  const fromFile = v['base-url'];
  if (!config || own['base-url'] !== undefined || fromFile === undefined) return undefined;
  const theirs = env.EVAL_RUNNER_BASE_URL ? originOf(env.EVAL_RUNNER_BASE_URL) : undefined;
  return theirs !== undefined && theirs === originOf(fromFile) ? undefined : config.file;
}

/** The token may go to a base URL `file` chose: allowed by --allow-env EVAL_RUNNER_TOKEN[=that origin], a remembered yes, or a yes now. */
export async function approveTokenOrigin(baseUrl: string, file: NamingFile, options: ApprovalOptions): Promise<void> {
  const origin = originOf(baseUrl) ?? baseUrl;
  // Windows reads variables whatever their case.
  const same = (a: string, b: string) => a.toUpperCase() === b.toUpperCase();
  if (allowedByFlag(options.allowEnv, SERVICE_TOKEN_ENV, origin, `${file.flag} ${file.path} sets the service's base URL to`, same)) return;
  const flags = `--base-url with the service you mean, or --allow-env ${SERVICE_TOKEN_ENV}=${origin} if you trust this file,`;
  await approveFile({ file, origin, variables: [SERVICE_TOKEN_ENV] }, options, {
    said: `${file.flag} ${file.path} sets the service's base URL, where your token goes, to ${origin}:\n  ${tokenLine(baseUrl)}\n`,
    noTerminal: `A file chooses where the token goes only once you allow it. With no terminal to ask at, add ${flags} to the command line.`,
    question: `Send your token to ${origin}?`,
    otherwise: `add ${flags} to the command line`,
  });
}

/**
 * Before a command sends the token: a base URL a config file chose is allowed (or the command stops, exit 2), then
 * where the token goes is said on stderr.
 */
export async function allowTokenOrigin(baseUrl: string, v: TokenOriginValues, own: TokenOriginValues, config: ConfigFlags | undefined): Promise<void> {
  // Every --allow-env is read here, for each command that sends the token: a bad one stops it before anything else.
  parseAllowEnv(own['allow-env'] ?? []);
  const file = baseUrlFile(v, own, config);
  if (!file) return;
  const ask = terminalAsker();
  await approveTokenOrigin(baseUrl, file, { allowEnv: own['allow-env'] ?? [], store: new ApprovalStore(), ...(ask ? { ask } : {}) });
  process.stderr.write(`${tokenLine(baseUrl)}\n`);
}
