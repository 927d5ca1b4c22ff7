import { connect } from 'node:net';
import { ConnectionError, createMessageConnection, ErrorCodes, ResponseError, SocketMessageReader, SocketMessageWriter } from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import type { RunProgress } from '../../core';
import { journalFolderProblem } from '../../protocol/runnerConnection';
import { liveRunner, runnerFilePath, socketProblem } from '../../protocol/runnerFiles';
import { RunnerVersionError, windowHandshake } from '../../protocol/runnerHandshake';
import { spawnRunner } from '../../protocol/runnerStart';
import { cancel, confirmEstimate, finished, LM_ERROR_CODE, lmSend, log, needToken, progress, prove, saved, start, state, view } from '../../protocol/runnerProtocol';
import type { ConfirmEstimateParams, LmSendError, LmSendParams, LmSendResult, RunFinished, RunnerFile, RunnerState, RunViewParams, StartParams, ViewParams } from '../../protocol/runnerProtocol';
// Pause, resume and concurrency (steerCommands.ts): in this bundle, with the JSON-RPC library.
export { steerRun } from '../../protocol/steerClient';

// How long a runner has to prove itself (a fresh one does in milliseconds).
const HANDSHAKE_MS = 10_000;

export interface RemoteRunEvents {
  progress(p: RunProgress): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /** The service rejected the token: a new one from the user (undefined: stop the run). */
  needToken(): Promise<string | undefined>;
  /**
   * A prompt for a chat model of the editor (the run's target is vscode-lm): its answer, or the target error it failed
   * with; rejects when cancelled. A window that cannot serve it leaves this out (the runner's call then fails).
   */
  lmSend?(params: LmSendParams, signal: AbortSignal): Promise<LmSendResult | { error: LmSendError }>;
  /** The run's estimate passed the threshold: whether the user goes on. Left out: the runner is told no. */
  confirmEstimate?(params: ConfirmEstimateParams): Promise<boolean>;
}

/**
 * A run in a runner process, seen from a window: started here, or found after a reload and attached to. The window
 * may go away at any time; the run does not.
 */
export class RemoteRun {
  /** How the run ended; undefined when the window lost the runner before it said (it was killed). */
  readonly finished: Promise<RunFinished | undefined>;
  private detached = false;
  private lost: () => void = () => undefined;
  /** Aborted when this window lets go of the run: the chat model's calls it serves end with it. */
  private readonly gone = new AbortController();

  private constructor(
    private readonly connection: MessageConnection,
    readonly pid: number,
    events: RemoteRunEvents,
  ) {
    connection.onNotification(progress, (p) => events.progress(p));
    connection.onNotification(log, ({ level, message }) => events.log(level, message));
    connection.onRequest(needToken, async () => ({ token: await events.needToken() }));
    connection.onRequest(confirmEstimate, async (params) => ({ go: (await events.confirmEstimate?.(params)) === true }));
    const serve = events.lmSend?.bind(events);
    if (serve) {
      connection.onRequest(lmSend, async (params, token) => {
        const call = new AbortController();
        const stop = () => call.abort();
        token.onCancellationRequested(stop);
        this.gone.signal.addEventListener('abort', stop, { once: true });
        try {
          const answer = await serve(params, call.signal);
          if ('error' in answer) throw new ResponseError(LM_ERROR_CODE, answer.error.message, answer.error);
          return answer;
        } finally {
          this.gone.signal.removeEventListener('abort', stop);
        }
      });
    }
    this.finished = new Promise((resolve) => {
      this.lost = () => resolve(undefined);
      connection.onNotification(finished, (f) => resolve(f));
      connection.onClose(() => {
        resolve(undefined);
        // A closed connection answers nothing, and vscode-jsonrpc fails its requests in flight only once disposed: a
        // run that ended while this window attached left its state request, and the window's follow, waiting for ever.
        connection.dispose();
      });
    });
  }

  /** Starts a runner for this journal with the editor's own Node runtime, detached, and starts the run in it. */
  static async start(runnerScript: string, journalFile: string, params: StartParams, events: RemoteRunEvents): Promise<RemoteRun> {
    // The editor's binary is Electron: ELECTRON_RUN_AS_NODE makes it the plain Node it ships. No secret is in the environment.
    const file = await spawnRunner(runnerScript, journalFile, { ...process.env, ELECTRON_RUN_AS_NODE: '1' });
    const run = await RemoteRun.connect(file, events);
    await inWords(() => run.connection.sendRequest(start, params));
    return run;
  }

  /**
   * Attaches to the runner of this journal, if one is running and proves itself; undefined otherwise (a runner file
   * that is not ours is left alone, and the log says why). Throws RunnerVersionError for a runner whose hello speaks
   * another protocol version: a run of another Eval Runner version, said to the user.
   */
  static async attach(journalFile: string, events: RemoteRunEvents): Promise<{ run: RemoteRun; state: RunnerState } | undefined> {
    const file = liveRunner(journalFile);
    if (!file) return undefined;
    // A runner keeps its journal's folder this user's own: a runner file elsewhere may be a link to another's run.
    const folder = journalFolderProblem(journalFile);
    if (folder) {
      events.log('warn', `Not attaching to the runner (pid ${file.pid}) named by ${runnerFilePath(journalFile)}: ${folder.message}.`);
      return undefined;
    }
    try {
      const run = await RemoteRun.connect(file, events);
      return { run, state: await inWords(() => run.connection.sendRequest(state)) };
    } catch (error) {
      // Another Eval Runner version's run is not "no run": the caller tells the user.
      if (error instanceof RunnerVersionError) throw error;
      events.log('warn', `Not attaching to the runner (pid ${file.pid}) named by ${runnerFilePath(journalFile)}: ${error instanceof Error ? error.message : String(error)}.`);
      return undefined;
    }
  }

  /**
   * Connects to a runner and has it prove itself before this window sends anything but its nonce, or answers
   * anything it asks (a token, a chat model's call); then proves itself in turn.
   */
  private static async connect(file: RunnerFile, events: RemoteRunEvents): Promise<RemoteRun> {
    const problem = socketProblem(file.socket);
    if (problem) throw new Error(`its socket ${file.socket} was not connected to: ${problem}`);
    const socket = connect(file.socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.on('error', () => undefined);
    // A runner that refuses the handshake closes the socket; the request would wait for ever otherwise.
    const refused = new Promise<never>((_resolve, reject) => socket.once('close', () => reject(new Error('The runner refused the connection.'))));
    refused.catch(() => undefined);
    const connection = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
    connection.listen();
    // A listener that never answers must not hold the window for ever.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`the runner did not prove itself within ${HANDSHAKE_MS / 1000} s`)), HANDSHAKE_MS)));
    late.catch(() => undefined);
    try {
      const proof = await Promise.race([windowHandshake(connection, file), refused, late]);
      // Only now are the runner's requests answered: the handlers exist from here on.
      const run = new RemoteRun(connection, file.pid, events);
      await Promise.race([connection.sendRequest(prove, { proof }), refused, late]);
      return run;
    } catch (error) {
      connection.dispose();
      socket.destroy();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** abandonBatches: its open Batch API batches are cancelled at the provider too. */
  cancel(hard: boolean, abandonBatches = false): void {
    // A window going away cancels its toasts too: that must never reach a run it has let go of.
    if (this.detached) return;
    void this.connection.sendRequest(cancel, { hard, ...(abandonBatches ? { abandonBatches } : {}) }).catch(() => undefined);
  }

  /**
   * What Run Details shows of the run (its figures, these traces' rows), from the runner's memory; undefined when it
   * cannot say (a CLI run that does not tell it, a runner gone): the window reads the journal then.
   */
  async view(ids: string[], rows?: ViewParams['rows']): Promise<RunViewParams | undefined> {
    if (this.detached) return undefined;
    return this.connection.sendRequest(view, { ids, ...(rows ? { rows } : {}) }).then(
      (v) => v,
      () => undefined,
    );
  }

  /** A file was saved in the editor (the runner decides whether its target cares). */
  saved(path: string): void {
    if (!this.detached) void this.connection.sendNotification(saved, { path }).catch(() => undefined);
  }

  /** Lets go of the run (a reload, a closed window): it goes on without this window. */
  detach(): void {
    if (this.detached) return;
    this.detached = true;
    this.gone.abort();
    this.connection.dispose();
    this.lost();
  }
}

/**
 * A request the runner left unanswered because the connection closed, said in words: vscode-jsonrpc's are "Pending
 * response rejected since connection got disposed" (closed while asked) and "Connection is closed." (closed before),
 * which a user reads in "Running … failed: …".
 */
async function inWords<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if ((error instanceof ResponseError && error.code === ErrorCodes.PendingResponseRejected) || error instanceof ConnectionError) {
      throw new Error('the runner closed the connection before it answered (its run ended, or its process exited)');
    }
    throw error;
  }
}
