// A run started from outside any window (an agent's tool, src/tools): a detached runner process hosts it, as it hosts
// an editor's run, so the run goes on when the caller ends and every window, `status` and `list` see it. The caller
// sends the start (secrets cross the socket only) and lets go; cancel reaches a run going on the same way.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { findRunner, liveRunner, runnerFailurePath, socketProblem } from './runnerFiles';
import type { RunnerFile } from './runnerFiles';
import { otherVersionText, windowHandshake } from './runnerHandshake';
import { cancel, prove, start, state } from './runnerProtocol';
import type { RunnerState, StartParams } from './runnerProtocol';

// A fresh runner says where it listens in tens of milliseconds; a request is answered at once.
const RUNNER_START_MS = 15_000;
const REQUEST_MS = 15_000;

/**
 * Starts a runner for this journal (`runnerScript`: dist/runner.js, run by this Node), sends it the run and lets go:
 * the run's state as the runner tells it right after the start. No secret is in the runner's argv; `env` is the
 * caller's environment less the token and the variables the run reads secrets from (its target's own code gets the rest).
 */
export async function startDetachedRun(runnerScript: string, journalFile: string, params: StartParams, env: NodeJS.ProcessEnv): Promise<{ pid: number; state: RunnerState }> {
  const child = spawn(process.execPath, [runnerScript, journalFile], { detached: true, stdio: 'ignore', windowsHide: true, env });
  child.unref();
  const exited = new Promise<never>((_resolve, reject) => {
    child.once('exit', (code) => reject(new Error(readFailure(journalFile) ?? `The runner process ended at once (exit code ${code}).`)));
    child.once('error', (error) => reject(new Error(`The runner process could not start: ${error.message}`)));
  });
  exited.catch(() => undefined);
  const file = await Promise.race([runnerFileOf(journalFile, child.pid), exited]);
  const runState = await withRunner(file, async (connection) => {
    await connection.sendRequest(start, params);
    return connection.sendRequest(state);
  });
  return { pid: file.pid, state: runState };
}

/** Cancels the run of this journal, wherever it was started (a runner or a CLI run): hard aborts calls in flight. */
export async function cancelRun(journalFile: string, hard: boolean): Promise<void> {
  const found = findRunner(journalFile);
  if (!found) throw new Error('no run of this evaluation is going on (no live runner file beside its journal)');
  if ('other' in found) throw new Error(otherVersionText(found.other.pid, found.other.version));
  await withRunner(found.runner, (connection) => connection.sendRequest(cancel, { hard }));
}

/** Connects, runs a window's handshake (the runner proves itself first), does `act`, and closes. */
async function withRunner<T>(file: RunnerFile, act: (connection: MessageConnection) => Promise<T>): Promise<T> {
  const problem = socketProblem(file.socket);
  if (problem) throw new Error(`the run's socket ${file.socket} was not connected to: ${problem}`);
  const socket = connect(file.socket);
  socket.on('error', () => undefined);
  const connection = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`the runner (pid ${file.pid}) did not answer within ${REQUEST_MS / 1000} s`)), REQUEST_MS)));
  const closed = new Promise<never>((_resolve, reject) => socket.once('close', () => reject(new Error(`the runner (pid ${file.pid}) closed the connection`))));
  late.catch(() => undefined);
  closed.catch(() => undefined);
  try {
    await Promise.race([new Promise<void>((resolve) => socket.once('connect', resolve)), closed, late]);
    connection.listen();
    const proof = await Promise.race([windowHandshake(connection, file), closed, late]);
    await Promise.race([connection.sendRequest(prove, { proof }), closed, late]);
    return await Promise.race([act(connection), closed, late]);
  } finally {
    clearTimeout(timer);
    connection.dispose();
    socket.destroy();
  }
}

/** What a runner that could not start said (it has no terminal). */
function readFailure(journalFile: string): string | undefined {
  const path = runnerFailurePath(journalFile);
  try {
    const text = readFileSync(path, 'utf8').slice(0, 2000);
    rmSync(path, { force: true });
    return text;
  } catch {
    return undefined;
  }
}

async function runnerFileOf(journalFile: string, pid: number | undefined): Promise<RunnerFile> {
  const deadline = Date.now() + RUNNER_START_MS;
  for (;;) {
    const file = liveRunner(journalFile);
    if (file && file.pid === pid) return file;
    if (Date.now() > deadline) throw new Error(`The runner process did not start within ${RUNNER_START_MS / 1000} s.`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
