// Steering the run of a journal from outside it (`eval-runner pause`, `resume`, `set --concurrency`): find its runner
// file, connect, run a window's handshake, send the one request, close. Whoever started the run: the editor's runner
// or a CLI run, both listen the same way.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from 'vscode-jsonrpc/node';
import { folderProblem } from './ownerOnly';
import { findRunner, socketProblem } from './runnerFiles';
import { otherVersionText, RunnerVersionError, windowHandshake } from './runnerHandshake';
import { pause, prove, resume, setConcurrency } from './runnerProtocol';
import type { SteerResult } from './runnerTypes';

export type Steer = { action: 'pause' } | { action: 'resume' } | { action: 'setConcurrency'; concurrency: number };

/** Why a steer could not reach a run: none going on, another protocol version, or a listener that failed. */
export class SteerError extends Error {
  override name = 'SteerError';

  constructor(
    message: string,
    readonly reason: 'noRun' | 'otherVersion' | 'failed',
  ) {
    super(message);
  }
}

// A run that does not answer a steer in this long is not taken to have acknowledged it.
const STEER_TIMEOUT_MS = 15_000;

/** Steers the run of this journal; resolves with the run's acknowledgement (where its steering stands now). */
export async function steerRun(journalFile: string, steer: Steer, timeoutMs = STEER_TIMEOUT_MS): Promise<SteerResult> {
  // A run keeps its journal's folder the user's own (0700): a runner file in another's folder may be a link to another run's.
  const noRun = () => new SteerError('no run of this evaluation is going on (no live runner file beside its journal)', 'noRun');
  // No folder at all: nothing was ever run here, which is "no run", not a folder to distrust.
  if (!existsSync(dirname(journalFile))) throw noRun();
  const folder = folderProblem(dirname(journalFile));
  if (folder && process.platform !== 'win32') throw new SteerError(`the runner file of this evaluation is in a folder not this user's alone, and was not read: ${folder}`, 'failed');
  const found = findRunner(journalFile);
  if (!found) throw noRun();
  if ('other' in found) throw new SteerError(otherVersionText(found.other.pid, found.other.version), 'otherVersion');
  const file = found.runner;
  const problem = socketProblem(file.socket);
  if (problem) throw new SteerError(`the run's socket ${file.socket} was not connected to: ${problem}`, 'failed');
  const socket = connect(file.socket);
  socket.on('error', () => undefined);
  const connection = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new SteerError(`the run (pid ${file.pid}) did not answer within ${timeoutMs / 1000} s`, 'failed')), timeoutMs)));
  const closed = new Promise<never>((_resolve, reject) => socket.once('close', () => reject(new SteerError(`the run (pid ${file.pid}) closed the connection`, 'failed'))));
  late.catch(() => undefined);
  closed.catch(() => undefined);
  try {
    await Promise.race([new Promise<void>((resolve) => socket.once('connect', resolve)), closed, late]);
    connection.listen();
    const proof = await Promise.race([windowHandshake(connection, file), closed, late]);
    await Promise.race([connection.sendRequest(prove, { proof }), closed, late]);
    const sent =
      steer.action === 'pause'
        ? connection.sendRequest(pause)
        : steer.action === 'resume'
          ? connection.sendRequest(resume)
          : connection.sendRequest(setConcurrency, { concurrency: steer.concurrency });
    return await Promise.race([sent, closed, late]);
  } catch (error) {
    if (error instanceof SteerError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new SteerError(message, error instanceof RunnerVersionError ? 'otherVersion' : 'failed');
  } finally {
    clearTimeout(timer);
    connection.dispose();
    socket.destroy();
  }
}
