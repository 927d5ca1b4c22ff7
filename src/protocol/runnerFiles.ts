// Where a runner says it listens, and how a window finds it: a small owner-only file beside the journal. Read by
// the window (attach) and written by the runner; nothing else of the protocol touches the disk.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { isAlive, isOwnProcess, journalLockPid } from '../core';
import { folderProblem, writeOwnerOnlyFile } from './ownerOnly';

export { isAlive, journalHeld } from '../core';

/** Bumped when a message changes shape: a window attaches only to a runner that speaks its version. */
// 2: the runner asks a window for a chat model's answers (lmSend); a window of version 1 could not serve them.
// 3: a mutual challenge-response (hello with nonces, then prove): the secret no longer crosses the socket.
// 4: start carries a rerun's subset (run.subset) rather than its ids and a rerun flag; the runner picks the traces.
// 5: pause, resume and setConcurrency steer a run; a CLI run listens too, and its progress says when it is paused.
// 6: start carries the window's cost settings; confirmEstimate asks a window before a costly run.
// 7: view: a window showing the run asks the runner for Run Details' rows and figures instead of reading its journal.
export const RUNNER_PROTOCOL_VERSION = 8;

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
  /** When its run ended: the runner lingers a moment for a window to read how, and the next run's runner may take its place. */
  endedAt?: number;
}

export function runnerFilePath(journalFile: string): string {
  return `${journalFile}.runner.json`;
}

/** Where a runner that could not start says why (it has no terminal), for the window that started it. */
export function runnerFailurePath(journalFile: string): string {
  return `${runnerFilePath(journalFile)}.failed`;
}

/** A live process of this user's whose runner file speaks another protocol version: named to the user, not attached to. */
export interface OtherRunner {
  pid: number;
  version: unknown;
}

/**
 * The runner of this journal: one this window can attach to, one of another Eval Runner version (the user is told
 * what to do about it), or none. A file naming another user's process (EPERM) is not our runner: none.
 */
export function findRunner(journalFile: string): { runner: RunnerFile } | { other: OtherRunner } | undefined {
  let file: Partial<Record<keyof RunnerFile, unknown>> | null;
  try {
    file = JSON.parse(readFileSync(runnerFilePath(journalFile), 'utf8')) as typeof file;
  } catch {
    return undefined;
  }
  const pid = file?.pid;
  if (!file || typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0 || !isOwnProcess(pid)) return undefined;
  if (file.version !== RUNNER_PROTOCOL_VERSION) return { other: { pid, version: file.version } };
  if (typeof file.socket !== 'string' || typeof file.secret !== 'string') return undefined;
  return { runner: file as RunnerFile };
}

/** The runner file, when there is one that names a live process of ours speaking this protocol's version. */
export function liveRunner(journalFile: string): RunnerFile | undefined {
  const found = findRunner(journalFile);
  return found && 'runner' in found ? found.runner : undefined;
}

/**
 * Whether a run of this journal was cut short (cheap: two tiny files): a runner file naming a process that is gone
 * or not ours, or a journal lock naming a process that is gone. A run that ended removed both.
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
  const runner = runnerPid();
  // The lock is read by the journal's own lock module, through the file layer the journal writes through; its rule
  // stays: another user's process holding it is alive.
  const lock = journalLockPid(journalFile);
  return (runner !== undefined && !isOwnProcess(runner)) || (lock !== undefined && !isAlive(lock));
}

/**
 * A fresh place to listen that only this user can reach: a Unix socket in a new owner-only folder (0700, checked
 * after it is made; short enough for the 104-byte limit of a socket path), or on Windows a named pipe with an
 * unguessable name. Node cannot give a pipe an owner-only DACL: there the handshake guards it (a squatter on the
 * name cannot prove the secret, and never learns it).
 */
export function newSocketPath(platform = process.platform): { path: string; dispose(): void } {
  if (platform === 'win32') return { path: `\\\\.\\pipe\\eval-runner-${randomBytes(12).toString('hex')}`, dispose: () => undefined };
  // Later and off the main thread: listing a large temporary folder (28,000 entries here) blocked every run's start
  // for 20-30 ms. A process that ends sooner leaves the sweep to the next.
  setTimeout(() => void sweepLeftSocketFolders(), SWEEP_DELAY_MS).unref();
  // The pid in the name lets a later run tell a folder that a killed run left (SIGKILL, a crash) from a live one's.
  const dir = mkdtempSync(join(tmpdir(), `evr-${process.pid}-`));
  const problem = folderProblem(dir);
  if (problem) throw new Error(`The runner's socket folder is not this user's alone: ${problem}.`);
  return { path: join(dir, 's'), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

const SWEEP_DELAY_MS = 10_000;

// A folder this young may be a starting run's that has not listened yet (its pid may be in another pid namespace).
const LEFT_FOLDER_AGE_MS = 60_000;

/**
 * Removes the socket folders of this user that runs killed hard left in the temporary folder: named with a pid no
 * longer alive, older than a minute, and with no one listening on their socket. Best effort: an error leaves a folder.
 */
export async function sweepLeftSocketFolders(dir = tmpdir()): Promise<string[]> {
  const swept: string[] = [];
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /^evr-\d+-/.test(n));
  } catch {
    return swept;
  }
  for (const name of names) {
    const folder = join(dir, name);
    try {
      const stat = await lstat(folder);
      if (!stat.isDirectory() || stat.uid !== process.getuid?.() || Date.now() - stat.mtimeMs < LEFT_FOLDER_AGE_MS) continue;
      if (isAlive(Number(/^evr-(\d+)-/.exec(name)![1])) || (await someoneListens(join(folder, 's')))) continue;
      await rm(folder, { recursive: true, force: true });
      swept.push(folder);
    } catch {
      // another sweeper's, or not ours to read: left as it is
    }
  }
  return swept;
}

function someoneListens(socket: string): Promise<boolean> {
  if (!existsSync(socket)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = connect(socket);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code !== 'ECONNREFUSED' && error.code !== 'ENOENT'));
  });
}

/**
 * Why a window must not connect to this socket (undefined: it may): on Windows, not a pipe of this machine named as
 * a runner names it; elsewhere a folder not this user's alone (see folderProblem), or a socket of another user.
 */
export function socketProblem(socket: string, platform = process.platform): string | undefined {
  if (platform === 'win32') return /^\\\\\.\\pipe\\eval-runner-[0-9a-f]{24}$/.test(socket) ? undefined : 'it is not a named pipe of this machine named by Eval Runner';
  if (!isAbsolute(socket)) return 'its path is not absolute';
  const folder = folderProblem(dirname(socket));
  if (folder) return `its folder is not this user's alone: ${folder}`;
  try {
    const stat = lstatSync(socket);
    if (!stat.isSocket()) return `${socket} is not a socket`;
    if (stat.uid !== process.getuid?.()) return `${socket} belongs to uid ${stat.uid}, not to this user`;
  } catch (error) {
    return `${socket} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  return undefined;
}

/** Writes the runner file owner-only, whole or not at all (a reader never sees half of it; no link is followed). */
export function writeRunnerFile(journalFile: string, file: RunnerFile): void {
  writeOwnerOnlyFile(runnerFilePath(journalFile), JSON.stringify(file));
}

/** Words for a runner of another Eval Runner version: what the user can do about it (it is not "no runner"). */
export function otherVersionText(pid: number, version: unknown): string {
  return `the runner (pid ${pid}) speaks version ${JSON.stringify(version) ?? 'none'} of the runner protocol and this Eval Runner version ${RUNNER_PROTOCOL_VERSION}: it is a run of another Eval Runner version (as after an update); wait for it to end, or stop it`;
}

/** A run of this evaluation is going on in another process: its runner file stays, this process does not listen. */
export class RunnerFileHeld extends Error {
  override name = 'RunnerFileHeld';

  constructor(readonly holder: { runner: RunnerFile } | { other: OtherRunner }) {
    super(`this evaluation is already running${'other' in holder ? `: ${otherVersionText(holder.other.pid, holder.other.version)}` : ` (runner pid ${holder.runner.pid})`}`);
  }
}

/**
 * Writes the runner file unless another live process holds it: a runner of this version whose run has not ended
 * (it runs, or it is about to: two starts at once), or one of another version that holds the journal's lock. Created
 * where no file is, so of two at once one wins and the other is told; a file left by a gone or finished run is replaced.
 */
export function claimRunnerFile(journalFile: string, file: RunnerFile): void {
  for (let tries = 0; tries < 3; tries++) {
    try {
      writeOwnerOnlyFile(runnerFilePath(journalFile), JSON.stringify(file), 'create');
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const found = findRunner(journalFile);
    const holder = found && ('runner' in found ? found.runner : found.other);
    const holds = found && holder && holder.pid !== process.pid && ('runner' in found ? found.runner.endedAt === undefined : journalLockPid(journalFile) === holder.pid);
    if (found && holds) throw new RunnerFileHeld(found);
    rmSync(runnerFilePath(journalFile), { force: true });
  }
  throw new Error(`${runnerFilePath(journalFile)} could not be claimed: another process writes it at the same time`);
}

/** Says in the runner file that its run ended (only ours: the next run's runner may have taken the file). */
export function markRunnerEnded(journalFile: string, pid = process.pid): void {
  const found = findRunner(journalFile);
  if (found && 'runner' in found && found.runner.pid === pid) writeRunnerFile(journalFile, { ...found.runner, endedAt: Date.now() });
}

export function removeRunnerFile(journalFile: string, pid = process.pid): void {
  try {
    const file = JSON.parse(readFileSync(runnerFilePath(journalFile), 'utf8')) as RunnerFile;
    if (file.pid === pid) rmSync(runnerFilePath(journalFile), { force: true });
  } catch {
    // gone already
  }
}

/**
 * Why a run could not be reached: none going on, another protocol version, or a runner that failed to answer. (Here
 * rather than in runnerConnection.ts so that a command that steers knows it without loading the JSON-RPC library.)
 */
export class RunReachError extends Error {
  override name = 'RunReachError';

  constructor(
    message: string,
    readonly reason: 'noRun' | 'otherVersion' | 'failed',
  ) {
    super(message);
  }
}

/**
 * Listens on a fresh owner-only socket and writes the runner file beside the journal (its folder made owner-only by
 * the caller first): where a window finds the run, and the secret it proves itself with. Throws RunnerFileHeld when
 * another process's run holds the file (claimRunnerFile).
 */
export async function listenBesideJournal(server: Server, journalFile: string, secret: string): Promise<{ path: string; dispose(): void }> {
  const socket = newSocketPath();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket.path, () => resolve());
  });
  try {
    if (process.platform !== 'win32') chmodSync(socket.path, 0o600);
    claimRunnerFile(journalFile, { version: RUNNER_PROTOCOL_VERSION, pid: process.pid, socket: socket.path, secret, startedAt: Date.now() });
  } catch (error) {
    server.close();
    socket.dispose();
    throw error;
  }
  return socket;
}
