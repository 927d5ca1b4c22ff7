import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { TargetError } from '../target';
import { killTree, treeSpawnOptions } from '../processes';
import { spawnErrorText } from '../spawnErrors';
import type { BatchOptions } from './workerBatches';

/**
 * The worker protocol: a long-lived process per worker, JSON lines both ways.
 *   in:  {"id": 1, "prompt": "…", "traceId": "…", "evaluationId": 1, "kind": "benchmark"}
 *   out: {"id": 1, "answer": "…", "usage"?: {"promptTokens": n, "completionTokens": n}} or {"id": 1, "error": "…", "traceback"?: "…"}
 * A worker may first say {"ready": true} (the Python shim does, once the module is loaded) or {"fatal": "…"}
 * (it cannot serve at all: the run stops). Each worker answers one request at a time; the pool spreads the
 * run's concurrency over its workers. With `batch`, a request holds several prompts (see workerBatches.ts).
 */
export interface WorkerTargetOptions {
  /** For logs and errors: "The worker", "The Python function". */
  what: string;
  description: string;
  program: string;
  args: readonly string[];
  workers: number;
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Wait for {"ready": true} before the first request. */
  handshake?: boolean;
  /** Where the workers' stderr goes, line by line. */
  onLog?: (level: 'info' | 'warn', message: string) => void;
  /** Prompts gathered into batches, one request line per batch (a batch function); absent: one prompt per request. */
  batch?: BatchOptions;
}

const MAX_LINE = 64 * 1024 * 1024;
const STDERR_LINES = 20;
const LOGGED_STDERR_LINES = 500;
const QUOTED = 200;
/** How much of a traceback a failure reason keeps: its end, where the exception is. */
export const TRACEBACK_CHARS = 4000;

interface Pending {
  id: number;
  /** The reply line with this request's id, read by the caller (one answer, or a batch's). */
  resolve: (reply: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

/** One worker process: its line reader, its one request in flight, and how it ended. */
export class Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  pending: Pending | undefined;
  /** Why it cannot serve (exited, killed, broken): set once. */
  broken: Error | undefined;
  private stdoutBuf = '';
  private stderrBuf = '';
  private readonly stderrTail: string[] = [];
  private stderrLogged = 0;
  private readyWait: { resolve: () => void; reject: (e: Error) => void } | undefined;

  constructor(
    private readonly options: WorkerTargetOptions,
    readonly generation: number,
  ) {
    this.child = spawn(options.program, [...options.args], {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...treeSpawnOptions(),
    });
    this.ready = options.handshake
      ? new Promise<void>((resolve, reject) => (this.readyWait = { resolve, reject }))
      : Promise.resolve();
    this.ready.catch(() => undefined);
    this.child.stdout!.setEncoding('utf8');
    this.child.stderr!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr!.on('data', (chunk: string) => this.onStderr(chunk));
    this.child.stdin!.on('error', () => undefined);
    this.child.on('error', (error) => {
      this.end(new TargetError(`${options.what} could not start: ${spawnErrorText(error, options.program, { cwd: options.cwd, env: options.env })}`, 'failed', { retryable: false, stopsRun: true, setup: true, cause: 'worker did not start' }));
    });
    this.child.on('exit', (code, signal) => {
      this.flushStderr();
      const tail = this.tail();
      const how = code !== null ? `exited with code ${code}` : `was ended by ${signal}`;
      if (this.readyWait) {
        this.end(new TargetError(`${options.what} ${how} before it was ready${tail ? `: ${tail}` : ''}`, 'failed', { retryable: false, stopsRun: true, setup: true, cause: 'worker did not start' }));
      } else {
        this.end(new TargetError(`${options.what} ${how} while answering${tail ? `: ${tail}` : ''}`, 'failed', { retryable: true, cause: `worker ${how}` }));
      }
      // Whatever the worker started dies with it: nothing of a crashed worker is left to run on.
      killTree(this.child);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends one request; resolves with the reply line, rejects with a TargetError (or the caller's abort). */
  call(id: number, request: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.pending = { id, resolve, reject };
      this.child.stdin!.write(`${JSON.stringify(request)}\n`);
    });
  }

  kill(why: Error): void {
    this.end(why);
    killTree(this.child);
  }

  private end(why: Error): void {
    this.broken ??= why;
    this.readyWait?.reject(this.broken);
    this.readyWait = undefined;
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(why);
  }

  private onStdout(chunk: string): void {
    this.stdoutBuf += chunk;
    if (this.stdoutBuf.length > MAX_LINE) {
      this.kill(new TargetError(`${this.options.what} wrote a line longer than 64 MiB`, 'failed', { retryable: false, cause: 'answer too large' }));
      return;
    }
    let nl: number;
    while ((nl = this.stdoutBuf.indexOf('\n')) >= 0) {
      const line = this.stdoutBuf.slice(0, nl).replace(/\r$/, '');
      this.stdoutBuf = this.stdoutBuf.slice(nl + 1);
      if (line.trim()) this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let message: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) message = value as Record<string, unknown>;
    } catch {
      // not the protocol: below
    }
    if (message && typeof message.fatal === 'string') {
      this.kill(new TargetError(`${this.options.what} cannot start: ${quote(message.fatal)}`, 'failed', { retryable: false, stopsRun: true, setup: true, cause: 'worker did not start' }));
      return;
    }
    if (message && message.ready === true) {
      this.readyWait?.resolve();
      this.readyWait = undefined;
      return;
    }
    const pending = this.pending;
    if (!message || typeof message.id !== 'number') {
      // Output that is not the protocol fails the request in flight (the run goes on); the worker stays.
      const error = new TargetError(`${this.options.what} wrote a line that is not the worker protocol: "${quote(line)}"`, 'failed', { retryable: false, cause: 'not the worker protocol' });
      if (pending) {
        this.pending = undefined;
        pending.reject(error);
      } else this.options.onLog?.('warn', error.message);
      return;
    }
    if (!pending || pending.id !== message.id) return; // a late reply to a request already given up
    this.pending = undefined;
    pending.resolve(message);
  }

  private onStderr(chunk: string): void {
    this.stderrBuf += chunk;
    let nl: number;
    while ((nl = this.stderrBuf.indexOf('\n')) >= 0) {
      this.stderrLine(this.stderrBuf.slice(0, nl).replace(/\r$/, ''));
      this.stderrBuf = this.stderrBuf.slice(nl + 1);
    }
    if (this.stderrBuf.length > 64 * 1024) this.flushStderr();
  }

  private flushStderr(): void {
    if (this.stderrBuf) this.stderrLine(this.stderrBuf);
    this.stderrBuf = '';
  }

  private stderrLine(line: string): void {
    const text = quote(line, 2000);
    this.stderrTail.push(text);
    if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
    if (++this.stderrLogged <= LOGGED_STDERR_LINES) this.options.onLog?.('info', `worker ${this.child.pid}: ${text}`);
    else if (this.stderrLogged === LOGGED_STDERR_LINES + 1) this.options.onLog?.('info', `worker ${this.child.pid}: further stderr not logged`);
  }

  /** The last lines of stderr, for an error: a traceback's last line says what went wrong. */
  private tail(): string {
    return this.stderrTail.filter((l) => l.trim()).slice(-5).join('\n');
  }
}


/** Control characters (but tabs and line ends) shown as escapes: a worker's text cannot redraw a terminal. */
function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The start of a text a worker wrote, capped, control characters shown as escapes. */
export function quote(text: string, max = QUOTED): string {
  const shown = escapeControls(text);
  return shown.length > max ? `${shown.slice(0, max)}…` : shown;
}

/** The end of a text (a traceback ends with the innermost frame and the exception), capped, escaped. */
export function quoteEnd(text: string, max: number): string {
  const shown = escapeControls(text);
  return shown.length > max ? `…${shown.slice(shown.length - max)}` : shown;
}
