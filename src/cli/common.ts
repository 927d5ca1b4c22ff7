import { resolve } from 'node:path';
import { safeText } from './terminalText';
import { DEFAULT_MAX_LIST_MEGABYTES, MIB, createApiClient, parseBaseUrl } from '../api/client';
import type { ApiClient } from '../api/client';
import { ApiError, AuthError, NotReadyError } from '../api/errors';
import { EVALUATION_KINDS, otherKind } from '../api/evaluationKinds';
import { defaultStateDir, RUN_SETTINGS, StorageError } from '../core';
import type { EvaluationKind, RequestEncoding } from '../api/evaluationKinds';
import { choiceOption, intOption } from './args';
import { EXIT, UsageError } from './exitCodes';
import type { ExitCode } from './exitCodes';

export const SERVICE_OPTIONS = {
  'base-url': { type: 'string' },
  evaluation: { type: 'string' },
  kind: { type: 'string' },
  'max-list-mb': { type: 'string' },
} as const;

export const SERVICE_HELP = `  --base-url URL              the service (or EVAL_RUNNER_BASE_URL)
  --evaluation ID             the evaluation id (a number)
  --kind benchmark|robustness the evaluation's kind
  --max-list-mb N             the largest prompt list to read, in MB (default 4096): a guard against a runaway
                              answer; the list is read as it streams in, never held whole`;

export const CONFIG_HELP = `  --config FILE               the extension's settings as JSON (comments allowed): baseUrl, evaluations,
                              stateDir, ... without "evalRunner."; relative paths are read from the file's
                              folder; flags given override it`;

export const TOKEN_HELP = `The personal access token is read from EVAL_RUNNER_TOKEN (never a flag: flags show in process lists).`;

export interface ServiceArgs {
  baseUrl: string;
  evaluationId: number;
  kind: EvaluationKind;
  /** The guard against a runaway prompt list (--max-list-mb); undefined: the client's default. */
  maxListMegabytes?: number;
}

export function serviceArgs(v: { 'base-url'?: string; evaluation?: string; kind?: string; 'max-list-mb'?: string }, env = process.env): ServiceArgs {
  const baseUrl = v['base-url'] ?? env.EVAL_RUNNER_BASE_URL;
  if (!baseUrl) throw new UsageError('--base-url is required (or set EVAL_RUNNER_BASE_URL).');
  try {
    parseBaseUrl(baseUrl);
  } catch (error) {
    throw new UsageError(`--base-url: ${(error as Error).message}`);
  }
  if (v.evaluation === undefined) throw new UsageError('--evaluation is required.');
  return {
    baseUrl,
    evaluationId: intOption(v.evaluation, 'evaluation', 0),
    kind: choiceOption(v.kind, 'kind', EVALUATION_KINDS),
    ...(v['max-list-mb'] !== undefined ? { maxListMegabytes: intOption(v['max-list-mb'], 'max-list-mb', DEFAULT_MAX_LIST_MEGABYTES, RUN_SETTINGS.maxListMegabytes.min, RUN_SETTINGS.maxListMegabytes.max) } : {}),
  };
}

export function tokenFromEnv(baseUrl: string, env = process.env): string {
  const token = env.EVAL_RUNNER_TOKEN?.trim();
  if (!token) {
    // The sandbox's token is named only for a service on this machine: a real service's user needs their own.
    const local = /^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:|\/|$)/i.test(baseUrl);
    throw new UsageError(`Set EVAL_RUNNER_TOKEN to your personal access token${local ? ' (for the local sandbox: sandbox-token)' : ' for that service'}.`);
  }
  return token;
}

export function stateDirOf(flag: string | undefined, env = process.env): string {
  return flag || defaultStateDir(env);
}

export function clientFor(args: ServiceArgs, token: string, encoding?: RequestEncoding, connections?: number): ApiClient {
  try {
    return createApiClient({
      baseUrl: args.baseUrl,
      token,
      ...(encoding ? { encoding } : {}),
      ...(connections ? { connections } : {}),
      ...(args.maxListMegabytes ? { maxListBytes: args.maxListMegabytes * MIB } : {}),
      userAgent: 'eval-runner-cli',
      // Debug lines (a service's own conventions, such as a submit whose data is null) only when asked for.
      ...(process.env.EVAL_RUNNER_DEBUG ? { onDebug: (m: string) => process.stderr.write(`debug: ${safeText(m)}\n`) } : {}),
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** What to do about a rejected token, from the command line. */
export const TOKEN_NEXT_STEP = 'Set EVAL_RUNNER_TOKEN to a valid personal access token and try again.';

/** The CLI's words on an API failure: what happened, then what to do from the command line. */
export function explain(error: unknown): { message: string; code: ExitCode } {
  if (error instanceof UsageError) return { message: error.message, code: EXIT.usage };
  if (error instanceof StorageError) return { message: error.message, code: EXIT.storage };
  if (error instanceof AuthError) return { message: withHint(error, TOKEN_NEXT_STEP), code: EXIT.auth };
  if (error instanceof NotReadyError) return { message: error.message, code: EXIT.unreachable };
  if (error instanceof ApiError) {
    if (error.reason === 'network' || error.reason === 'timeout') return { message: error.message, code: EXIT.unreachable };
    if (error.reason === 'notFound' || error.reason === 'badRequest') return { message: error.message, code: EXIT.usage };
    return { message: error.message, code: EXIT.failedTraces };
  }
  if (error instanceof RangeError || error instanceof TypeError) return { message: error.message, code: EXIT.usage };
  return { message: error instanceof Error ? error.message : String(error), code: EXIT.failedTraces };
}

/** The error's message with its own next step replaced by the CLI's: said once, in the command line's terms. */
function withHint(error: ApiError, hint: string): string {
  return error.message.endsWith(error.hint) ? `${error.message.slice(0, error.message.length - error.hint.length)}${hint}` : `${error.message} ${hint}`;
}

/** After a 404, says whether the evaluation exists under the other kind. */
export async function otherKindHint(client: ApiClient, args: ServiceArgs): Promise<string> {
  const other = otherKind(args.kind);
  try {
    await client.listPrompts(other, args.evaluationId);
  } catch (error) {
    if (!(error instanceof NotReadyError)) return '';
  }
  return ` Evaluation ${args.evaluationId} exists as a ${other} evaluation: use --kind ${other}.`;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.reason === 'notFound';
}

// Why a file named by --out could not be written, in words (Node's own is "ENOENT: no such file or directory, open …").
const OUT_FILE_WHY: Record<string, string> = {
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'a part of its path is a file, not a folder',
  EISDIR: 'it is a folder; give a file name',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
};

/** Writes to a file the user named (--out): a failure is said in words, exit 2 (5 for a full disk), never raw. */
export async function writingOut<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const { code, path: failed } = error as NodeJS.ErrnoException;
    const why = code === undefined ? undefined : OUT_FILE_WHY[code];
    // Another file's failure (the journal's) is not this one's.
    if (!why || (failed !== undefined && resolve(failed) !== resolve(path))) throw error;
    const message = `Cannot write ${path}: ${why}.`;
    if (code === 'ENOSPC' || code === 'EDQUOT') throw new StorageError(`${message} Free some space and try again.`, code, path);
    throw new UsageError(`${message} Check --out.`);
  }
}
