// Reaching the run of a journal from outside a window for one request (`eval-runner pause`, an agent's cancel_run, a
// detached start): trust the folder, find the runner file, connect, run a window's handshake, act, close. One place,
// so every caller gets the same checks: a runner file is read only from a folder of this user's own.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { folderProblem } from './ownerOnly';
import { findRunner, RunReachError, socketProblem } from './runnerFiles';
import type { RunnerFile } from './runnerFiles';
import { otherVersionText, RunnerVersionError, windowHandshake } from './runnerHandshake';
import { prove } from './runnerProtocol';

// A runner answers a request at once; one that does not within this long is not taken to have acknowledged it.
export const REACH_TIMEOUT_MS = 15_000;

/**
 * Why the runner file beside this journal may not be read (undefined: it may). A run keeps its journal's folder the
 * user's own (0700): a runner file in another's folder may be a link to another run's. No folder at all is "no run".
 */
export function journalFolderProblem(journalFile: string): RunReachError | undefined {
  const folder = dirname(journalFile);
  if (!existsSync(folder)) return noRun();
  const problem = process.platform === 'win32' ? undefined : folderProblem(folder);
  return problem ? new RunReachError(`the runner file of this evaluation is in a folder not this user's alone, and was not read: ${problem}`, 'failed') : undefined;
}

/** The live runner file of this journal's run, from a trusted folder; throws in words when there is none to reach. */
export function runnerToReach(journalFile: string): RunnerFile {
  const problem = journalFolderProblem(journalFile);
  if (problem) throw problem;
  const found = findRunner(journalFile);
  if (!found) throw noRun();
  if ('other' in found) throw new RunReachError(otherVersionText(found.other.pid, found.other.version), 'otherVersion');
  return found.runner;
}

/** Connects to this runner, runs a window's handshake (the runner proves itself first), does `act`, and closes. */
export async function withRunner<T>(file: RunnerFile, act: (connection: MessageConnection) => Promise<T>, timeoutMs = REACH_TIMEOUT_MS): Promise<T> {
  const problem = socketProblem(file.socket);
  if (problem) throw new RunReachError(`the run's socket ${file.socket} was not connected to: ${problem}`, 'failed');
  const socket = connect(file.socket);
  socket.on('error', () => undefined);
  const connection = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new RunReachError(`the run (pid ${file.pid}) did not answer within ${timeoutMs / 1000} s`, 'failed')), timeoutMs)));
  const closed = new Promise<never>((_resolve, reject) => socket.once('close', () => reject(new RunReachError(`the run (pid ${file.pid}) closed the connection`, 'failed'))));
  late.catch(() => undefined);
  closed.catch(() => undefined);
  try {
    await Promise.race([new Promise<void>((resolve) => socket.once('connect', resolve)), closed, late]);
    connection.listen();
    const proof = await Promise.race([windowHandshake(connection, file), closed, late]);
    await Promise.race([connection.sendRequest(prove, { proof }), closed, late]);
    return await Promise.race([act(connection), closed, late]);
  } catch (error) {
    if (error instanceof RunReachError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new RunReachError(message, error instanceof RunnerVersionError ? 'otherVersion' : 'failed');
  } finally {
    clearTimeout(timer);
    connection.dispose();
    socket.destroy();
  }
}

/** Reaches the run of this journal for one exchange: `runnerToReach`, then `withRunner`. */
export async function reachRun<T>(journalFile: string, act: (connection: MessageConnection) => Promise<T>, timeoutMs = REACH_TIMEOUT_MS): Promise<T> {
  return await withRunner(runnerToReach(journalFile), act, timeoutMs);
}

function noRun(): RunReachError {
  return new RunReachError('no run of this evaluation is going on (no live runner file beside its journal)', 'noRun');
}
