// A run hosted outside a runner (the CLI's) listening on the runner protocol, so that it can be steered and shown from
// anywhere: `eval-runner pause` in another terminal, a window's Run Details. It serves what a runner serves a window
// once proven (state, cancel, pause, resume, setConcurrency) and tells progress and the end; it asks nothing back.
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import type { RefusedRun, RunSteering, RunSummary } from '../core';
import { ownerOnlyFolder } from './ownerOnly';
import { removeRunnerFile, RunnerFileHeld } from './runnerFiles';
import { cancel, finished, progress, state } from './runnerProtocol';
import { answerWindow, listenBesideJournal } from './runnerServe';
import type { ProgressParams, RunFinished, RunnerState, RunViewParams } from './runnerTypes';

/** What the run lends its listener. */
export interface ListenedRun {
  journalFile: string;
  steering: RunSteering;
  label: string;
  key: RunnerState['key'];
  cancel(hard: boolean): void;
  /** What Run Details shows of the run; left out, a window reads the run's journal instead. */
  view?(ids: string[], rows?: { start: number; end: number }): RunViewParams;
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
    serve(s, { run, secret, clients, state: () => ({ label: run.label, key: run.key, progress: last, finished: done }) });
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
      for (const c of clients) void c.sendNotification(progress, p).catch(() => undefined);
    },
    finished(result) {
      // What crosses is the summary without its error object, or a refusal's outcome and words (as a runner's).
      done = finishedOf(result);
      for (const c of clients) void c.sendNotification(finished, done).catch(() => undefined);
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

function serve(socket: Socket, ctx: { run: ListenedRun; secret: string; clients: Set<MessageConnection>; state: () => RunnerState }): void {
  const { connection, owner } = answerWindow(socket, ctx.secret, {
    proven: (c) => ctx.clients.add(c),
    gone: (c) => ctx.clients.delete(c),
    steering: () => ctx.run.steering,
    view: (ids, rows) => {
      if (!ctx.run.view) throw new Error('This run does not tell its view: read its journal.');
      return ctx.run.view(ids, rows);
    },
  });
  connection.onRequest(state, () => {
    owner();
    return ctx.state();
  });
  connection.onRequest(cancel, ({ hard }) => {
    owner();
    ctx.run.cancel(hard);
  });
  connection.listen();
}

function finishedOf(result: RunSummary | RefusedRun): RunFinished {
  if (result.outcome === 'targetChanged') return { outcome: result.outcome, message: result.message };
  const { error: _error, ...summary } = result;
  return summary;
}
