// Where a runner says it listens, and how a window finds it: a small owner-only file beside the journal. Read by
// the window (attach) and written by the runner; nothing else of the protocol touches the disk.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, journalLockPid } from '../core';
import { folderProblem, writeOwnerOnlyFile } from './ownerOnly';

export { isAlive, journalHeld } from '../core';

/** Bumped when a message changes shape: a window attaches only to a runner that speaks its version. */
// 2: the runner asks a window for a chat model's answers (lmSend); a window of version 1 could not serve them.
export const RUNNER_PROTOCOL_VERSION = 2;

/**
 * What a runner writes beside the journal (`<journal>.runner.json`, owner-only) once it listens: where to connect,
 * and the secret a client proves itself with. A window finds the runs in progress by these files. (Here rather than
 * in runnerProtocol.ts so that finding a runner does not load the JSON-RPC library.)
 */
export interface RunnerFile {
  version: number;
  pid: number;
  /** A Unix socket in an owner-only folder, or a named pipe. */
  socket: string;
  secret: string;
  startedAt: number;
}

export function runnerFilePath(journalFile: string): string {
  return `${journalFile}.runner.json`;
}

/** The runner file, when there is one that names a live process speaking this protocol's version. */
export function liveRunner(journalFile: string): RunnerFile | undefined {
  let file: RunnerFile;
  try {
    file = JSON.parse(readFileSync(runnerFilePath(journalFile), 'utf8')) as RunnerFile;
  } catch {
    return undefined;
  }
  if (file.version !== RUNNER_PROTOCOL_VERSION || typeof file.pid !== 'number' || typeof file.socket !== 'string' || typeof file.secret !== 'string') return undefined;
  return isAlive(file.pid) ? file : undefined;
}

/**
 * Whether a run of this journal was cut short (cheap: two tiny files): a runner file, or a journal lock, naming a
 * process that is gone. A run that ended removed both.
 */
export function interruptedRun(journalFile: string): boolean {
  const runnerPid = (): number | undefined => {
    try {
      const pid = Number((JSON.parse(readFileSync(runnerFilePath(journalFile), 'utf8')) as { pid?: unknown }).pid);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  // The lock is read by the journal's own lock module, through the file layer the journal writes through.
  return [runnerPid(), journalLockPid(journalFile)].some((pid) => pid !== undefined && !isAlive(pid));
}

/**
 * A fresh place to listen that only this user can reach: a Unix socket in a new owner-only folder (0700, checked
 * after it is made; short enough for the 104-byte limit of a socket path), or on Windows a named pipe with an
 * unguessable name (the handshake's secret, which only the owner can read, guards it as well).
 */
export function newSocketPath(platform = process.platform): { path: string; dispose(): void } {
  if (platform === 'win32') return { path: `\\\\.\\pipe\\eval-runner-${randomBytes(12).toString('hex')}`, dispose: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'evr-'));
  const problem = folderProblem(dir);
  if (problem) throw new Error(`The runner's socket folder is not this user's alone: ${problem}.`);
  return { path: join(dir, 's'), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes the runner file owner-only, whole or not at all (a reader never sees half of it; no link is followed). */
export function writeRunnerFile(journalFile: string, file: RunnerFile): void {
  writeOwnerOnlyFile(runnerFilePath(journalFile), JSON.stringify(file));
}

export function removeRunnerFile(journalFile: string, pid = process.pid): void {
  try {
    const file = JSON.parse(readFileSync(runnerFilePath(journalFile), 'utf8')) as RunnerFile;
    if (file.pid === pid) rmSync(runnerFilePath(journalFile), { force: true });
  } catch {
    // gone already
  }
}
