// The listening side of the runner protocol, shared by the two hosts of a run: the runner process (src/runner/main.ts)
// and a CLI run that listens (runListener.ts). Both listen owner-only beside the journal (listenBesideJournal, in
// runnerFiles.ts), prove a window before they serve it, and answer steering the same way; each adds the requests of
// its own (a start, a saved file).
import type { Socket } from 'node:net';
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { MAX_VIEW_IDS } from '../core';
import type { RunSteering } from '../core';
import { RunnerHandshake } from './runnerHandshake';
import { hello, pause, prove, resume, setConcurrency, view } from './runnerProtocol';
import type { RunViewParams } from './runnerTypes';

/** What a host does when a window proves itself or goes, and where its steering is. */
export interface WindowHooks {
  proven(connection: MessageConnection): void;
  gone(connection: MessageConnection): void;
  /** The run's steering; throws in words when there is nothing to steer yet. */
  steering(): RunSteering;
  /** What Run Details shows of the run (the view request); throws in words when the host cannot say. */
  view(ids: string[], rows?: { start: number; end: number }): RunViewParams;
}

/**
 * A window's connection: nothing is served to it, and nothing sent, until it proved it knows the secret (`owner()`
 * throws before). Steering is answered here; the caller adds its own requests, then calls `connection.listen()`.
 */
export function answerWindow(socket: Socket, secret: string, hooks: WindowHooks): { connection: MessageConnection; owner: () => void; proven: () => boolean } {
  const connection = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  const handshake = new RunnerHandshake(secret, () => socket.destroy());
  const owner = () => handshake.require();
  connection.onRequest(hello, (params) => handshake.hello(params));
  connection.onRequest(prove, (params) => {
    handshake.prove(params);
    hooks.proven(connection);
  });
  const steering = () => {
    owner();
    return hooks.steering();
  };
  connection.onRequest(pause, () => steering().pause());
  connection.onRequest(resume, () => steering().resume());
  connection.onRequest(setConcurrency, ({ concurrency }) => steering().setConcurrency(concurrency));
  connection.onRequest(view, (params) => {
    owner();
    // A proven window's, yet checked: a list of ids, of which only a window's worth is looked up.
    const ids = Array.isArray(params?.ids) ? params.ids.slice(0, MAX_VIEW_IDS).filter((id): id is string => typeof id === 'string') : [];
    const rows = params?.rows;
    const places = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;
    return hooks.view(ids, rows && places(rows.start) && places(rows.end) ? { start: rows.start, end: rows.end } : undefined);
  });
  // At the window's end of the socket, before anything else is written to it: a message to a half-closed socket fails.
  socket.on('end', () => hooks.gone(connection));
  connection.onClose(() => {
    hooks.gone(connection);
    // Disposed, so that a request to it in flight (a chat model's call) fails now rather than wait for ever.
    connection.dispose();
  });
  connection.onError(() => undefined);
  socket.on('error', () => undefined);
  return { connection, owner, proven: () => handshake.proven };
}
