// A run hosted outside a runner (the CLI's) listening on the runner protocol, so that it can be steered and shown from
// anywhere: `eval-runner pause` in another terminal, a window's Run Details. It serves what a runner serves a window
// once proven (state, cancel, pause, resume, setConcurrency) and tells progress and the end; it asks nothing back.
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import type { RefusedRun, RunSummary } from '../core';
import type * as ListenedWindow from './listenedWindow';
import { ownerOnlyFolder } from './ownerOnly';
import { listenBesideJournal, removeRunnerFile, RunnerFileHeld } from './runnerFiles';
import type { ProgressParams, RunFinished, RunnerState } from './runnerTypes';

/** What the run lends its listener. */
export interface ListenedRun extends ListenedWindow.ServedRun {
  journalFile: string;
  label: string;
  key: RunnerState['key'];
}

/** The listening run: feed it progress and the end; close it when the run is over. */
export interface RunListener {
  progress(p: ProgressParams): void;
  finished(result: RunSummary | RefusedRun): void;
  close(): void;
}

/**
 * Listens beside the journal as a runner does (an owner-only socket, the runner file with a fresh secret), unless a
 * live runner of another process already owns that file: then this run could not take the journal's lock anyway,
 * and the file is left to its owner. undefined: not listening.
 */
export async function listenForRun(run: ListenedRun): Promise<RunListener | undefined> {
  ownerOnlyFolder(dirname(run.journalFile));
  const secret = randomBytes(32).toString('hex');
  const clients = new Set<MessageConnection>();
  // Every connection, proven or not: a run that ends closes them all, or one left open would keep the CLI from exiting.
  const sockets = new Set<Socket>();
  let last: ProgressParams | undefined;
  let done: RunFinished | undefined;
  const server = createServer((s) => {
    sockets.add(s.once('close', () => sockets.delete(s)));
    try {
      windowSide().serveWindow(s, { run, secret, clients, state: () => ({ label: run.label, key: run.key, progress: last, finished: done }) });
    } catch {
      // A window that cannot be served is turned away; the run goes on.
      s.destroy();
    }
  });
  let socket: { dispose(): void };
  try {
    socket = await listenBesideJournal(server, run.journalFile, secret);
  } catch (error) {
    if (error instanceof RunnerFileHeld) return undefined;
    throw error;
  }
  // Listening is not the run's business: a socket that breaks later never stops it.
  server.on('error', () => undefined);
  return {
    progress(p) {
      last = p;
      if (clients.size > 0) windowSide().tellProgress(clients, p);
    },
    finished(result) {
      // What crosses is the summary without its error object, or a refusal's outcome and words (as a runner's).
      done = finishedOf(result);
      if (clients.size > 0) windowSide().tellFinished(clients, done);
    },
    close() {
      removeRunnerFile(run.journalFile);
      for (const c of clients) c.dispose();
      // What was written (the end) goes out first; a peer that keeps its side open does not hold the process.
      for (const s of sockets) s.end(() => s.destroy());
      server.close();
      socket.dispose();
    },
  };
}

/**
 * The JSON-RPC side (listenedWindow.ts), loaded when a connection first comes: vscode-jsonrpc costs a CLI command's
 * start some milliseconds of CPU, and most runs are followed by no window.
 */
let loaded: typeof ListenedWindow | undefined;
function windowSide(): typeof ListenedWindow {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loaded ??= require('./listenedWindow') as typeof ListenedWindow);
}

function finishedOf(result: RunSummary | RefusedRun): RunFinished {
  if (result.outcome === 'targetChanged') return { outcome: result.outcome, message: result.message };
  const { error: _error, ...summary } = result;
  return summary;
}
