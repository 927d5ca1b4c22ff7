// The runner process (dist/runner.js): hosts the core for one run of one evaluation, started detached by a window
// with the editor's own Node runtime, so the run outlives a window reload, an extension update or a closed window.
// argv: the journal's path (where the runner file goes). Secrets arrive only over the socket, after the handshake.
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { ownerOnlyFolder, writeOwnerOnlyFile } from '../protocol/ownerOnly';
import { listenBesideJournal, markRunnerEnded, removeRunnerFile, runnerFailurePath } from '../protocol/runnerFiles';
import { cancel, saved, start, state } from '../protocol/runnerProtocol';
import { answerWindow } from '../protocol/runnerServe';
import type { RunnerState } from '../protocol/runnerProtocol';
import { RunnerRun } from './runnerRun';
import { boundHeapGrowth } from '../core';

// A runner nobody starts a run in (the window died between spawning and starting) leaves by itself.
const IDLE_EXIT_MS = 60_000;
// After the run, a window reloading at that moment still gets to read how it ended.
const LINGER_MS = 3_000;

class RunnerHost {
  private readonly secret = randomBytes(32).toString('hex');
  private readonly clients = new Set<MessageConnection>();
  private socket: { dispose(): void } | undefined;
  private readonly server: Server = createServer((s) => this.connected(s));
  private run: RunnerRun | undefined;
  private readonly idle = setTimeout(() => this.exit(0), IDLE_EXIT_MS);

  constructor(private readonly journalFile: string) {}

  async listen(): Promise<void> {
    // The runner file holds the secret: its folder is this user's alone (tightened, or refused when not ours).
    ownerOnlyFolder(dirname(this.journalFile));
    // A second runner of a run going on (or of one starting at the same moment) stops: its file would hide the run
    // from every window, and its exit would remove it. A runner whose run ended lingers, and gives way.
    this.socket = await listenBesideJournal(this.server, this.journalFile, this.secret);
    // Ctrl-C in a terminal, a logout: as the CLI does, finish what is in flight and stop.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => (this.run ? this.run.cancel(false) : this.exit(0)));
  }

  private connected(socket: Socket): void {
    const { connection, owner, proven } = answerWindow(socket, this.secret, {
      proven: (c) => {
        this.clients.add(c);
        this.run?.attached();
      },
      gone: (c) => {
        if (this.clients.delete(c)) this.run?.detached();
      },
      // Before a start there is nothing to steer (the request fails, and says so).
      steering: () => {
        if (!this.run) throw new Error('This runner has no run to steer yet.');
        return this.run.steering;
      },
      view: (ids, rows) => {
        if (!this.run) throw new Error('This runner has no run to show yet.');
        return this.run.view(ids, rows);
      },
    });
    connection.onRequest(start, (params) => {
      owner();
      if (this.run) throw new Error('This runner already runs an evaluation.');
      clearTimeout(this.idle);
      this.run = new RunnerRun(params, this.clients, (code) => {
        markRunnerEnded(this.journalFile);
        setTimeout(() => this.exit(code), LINGER_MS);
      });
      void this.run.go();
    });
    connection.onRequest(state, (): RunnerState => {
      owner();
      return this.run?.state() ?? { label: '', key: undefined, progress: undefined, finished: undefined };
    });
    connection.onRequest(cancel, ({ hard, abandonBatches }) => {
      owner();
      this.run?.cancel(hard, abandonBatches === true);
    });
    connection.onNotification(saved, ({ path }) => {
      if (proven()) this.run?.saved(path);
    });
    connection.listen();
  }

  private exit(code: number): void {
    removeRunnerFile(this.journalFile);
    this.server.close();
    this.socket?.dispose();
    process.exit(code);
  }
}

const journalFile = process.argv[2];
if (!journalFile) {
  process.stderr.write('Usage: runner.js JOURNAL_FILE (started by the Eval Runner extension)\n');
  process.exit(2);
}
// vscode-jsonrpc 8 rethrows a request it could not write inside an async Promise executor, where nothing can catch
// it: a window whose socket broke at that moment would end the runner, and its run, as an unhandled rejection.
process.on('unhandledRejection', (reason) => {
  if (!windowGone(reason)) throw reason;
});
boundHeapGrowth();
// Made inside the promise: a socket folder that is not ours throws in the constructor, and must be told as well.
Promise.resolve().then(() => new RunnerHost(journalFile).listen()).catch((error: unknown) => {
  // Nobody reads a detached process's stderr: the window that started it reads this file when it exits early.
  const message = `The runner could not start: ${error instanceof Error ? error.message : String(error)}`;
  try {
    writeOwnerOnlyFile(runnerFailurePath(journalFile), message);
  } catch {
    process.stderr.write(`${message}\n`);
  }
  process.exit(1);
});

/** A write to a window's socket that failed because the window went away (it is told apart by the socket closing). */
function windowGone(reason: unknown): boolean {
  const code = (reason as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EPIPE' || code === 'ECONNRESET' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END';
}
