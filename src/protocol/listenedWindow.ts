// The JSON-RPC side of a CLI run that listens (runListener.ts): loaded when the first window or `eval-runner pause`
// connects, so that a run nobody follows, and every other CLI command, does not load vscode-jsonrpc.
import type { Socket } from 'node:net';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import type { RunSteering } from '../core';
import { cancel, finished, progress, state } from './runnerProtocol';
import { answerWindow } from './runnerServe';
import type { ProgressParams, RunFinished, RunnerState, RunViewParams } from './runnerTypes';

/** What a window is served of a listening run: its steering, Cancel, and what Run Details shows. */
export interface ServedRun {
  steering: RunSteering;
  cancel(hard: boolean): void;
  /** What Run Details shows of the run; left out, a window reads the run's journal instead. */
  view?(ids: string[], rows?: { start: number; end: number }): RunViewParams;
}

/** Serves one connection as a runner serves a window, once it proved itself: state, cancel, steering, the view. */
export function serveWindow(socket: Socket, ctx: { run: ServedRun; secret: string; clients: Set<MessageConnection>; state: () => RunnerState }): void {
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

export function tellProgress(clients: Iterable<MessageConnection>, p: ProgressParams): void {
  for (const c of clients) void c.sendNotification(progress, p).catch(() => undefined);
}

export function tellFinished(clients: Iterable<MessageConnection>, done: RunFinished): void {
  for (const c of clients) void c.sendNotification(finished, done).catch(() => undefined);
}
