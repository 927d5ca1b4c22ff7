import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { abortReason } from '../../../api/errors';
import { describeData } from '../../../api/schemas';
import { TargetError, readUsage } from '../target';
import type { Target, TargetCallOptions, TargetUsage } from '../target';
import { killTree, treeSpawnOptions } from '../processes';
import { BatchGatherer, batchRequest, settleBatch } from './workerBatches';
import type { BatchItem, BatchOptions, ReplyWords } from './workerBatches';

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

export interface WorkerTarget extends Target {
  /** Workers start afresh before the next request (the file changed); busy ones after their answer. */
  restart(): void;
  /** The pids of the live workers (tests check that none is left). */
  readonly pids: number[];
}

const MAX_LINE = 64 * 1024 * 1024;
const STDERR_LINES = 20;
const LOGGED_STDERR_LINES = 500;
const QUOTED = 200;
const TRACEBACK_CHARS = 4000;

interface Pending {
  id: number;
  /** The reply line with this request's id, read by the caller (one answer, or a batch's). */
  resolve: (reply: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

/** One worker process: its line reader, its one request in flight, and how it ended. */
class Worker {
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
      this.end(new TargetError(`${options.what} could not start (${options.program}): ${error.message}`, 'failed', { retryable: false, stopsRun: true, setup: true, cause: 'worker did not start' }));
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

/** A pool of long-lived workers speaking the worker protocol: started once, each serving one call at a time. */
export function createWorkerTarget(options: WorkerTargetOptions): WorkerTarget {
  return new WorkerPool(options);
}

class WorkerPool implements WorkerTarget {
  readonly description: string;
  readonly local = true;
  readonly gathersBatches: boolean;
  private readonly size: number;
  private readonly idle: Worker[] = [];
  private readonly live = new Set<Worker>();
  private readonly waiting: Array<() => void> = [];
  private busy = 0;
  /** Bumped by restart(): workers of an older generation are replaced, not reused. */
  private generation = 0;
  private nextId = 1;
  private closed = false;
  private readonly batches: BatchGatherer | undefined;
  /** The batch gatherer waits for slots on behalf of no one call: nothing cancels that wait but close(). */
  private readonly never = new AbortController().signal;

  constructor(private readonly options: WorkerTargetOptions) {
    this.description = options.description;
    this.size = Math.max(1, options.workers);
    this.gathersBatches = options.batch !== undefined;
    this.batches = options.batch
      ? new BatchGatherer(options.batch, { acquire: () => this.slot(this.never), release: () => this.release(), run: (items) => this.callBatch(items) })
      : undefined;
  }

  get pids(): number[] {
    return [...this.live].map((w) => w.pid).filter((p): p is number => p !== undefined);
  }

  async warmUp(signal: AbortSignal): Promise<void> {
    const fresh: Worker[] = [];
    while (this.live.size < this.size && !this.closed) fresh.push(this.take());
    this.idle.push(...fresh);
    const onAbort = () => fresh.forEach((w) => this.discard(w, new Error('cancelled')));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.all(fresh.map((w) => w.ready));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async send(prompt: string, call: TargetCallOptions): Promise<string> {
    if (this.batches) return this.batches.send(prompt, call);
    const queuedAt = Date.now();
    await this.slot(call.signal);
    try {
      const reply = await this.callOn(this.take(), prompt, call, queuedAt);
      if (reply.usage) call.onUsage?.(reply.usage);
      return reply.answer;
    } finally {
      this.release();
    }
  }

  restart(): void {
    this.generation++;
    for (const w of this.idle.splice(0)) this.discard(w, new Error('restarted'));
  }

  async close(): Promise<void> {
    this.closed = true;
    const stopped = new TargetError(`${this.options.what} was stopped`, 'failed', { retryable: false });
    const exits = [...this.live].map((w) => (w.child.exitCode !== null || w.child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => w.child.once('exit', () => r()))));
    this.batches?.close(stopped);
    for (const w of [...this.live]) this.discard(w, stopped);
    this.idle.length = 0;
    for (const wake of this.waiting.splice(0)) wake();
    await Promise.all(exits);
  }

  /**
   * One request on one worker, under the call's time-out and signal; the worker goes back to the pool if sound. The
   * wait since queuedAt for a free worker (and for a replacement's start) is told apart: it is not the function's time.
   */
  private async callOn(worker: Worker, prompt: string, call: TargetCallOptions, queuedAt: number): Promise<{ answer: string; usage?: TargetUsage }> {
    const id = this.nextId++;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.discard(worker, new TargetError(`${this.options.what} did not answer within ${Math.round(call.timeoutMs / 1000)} s; the worker was ended and replaced`, 'timeout'));
    }, call.timeoutMs);
    const onAbort = () => this.discard(worker, abortReason(call.signal));
    call.signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (call.signal.aborted) throw abortReason(call.signal);
      await worker.ready;
      call.onQueued?.(Date.now() - queuedAt);
      const reply = singleReply(await worker.call(id, { id, prompt, ...(call.context ?? {}) }), this.words);
      this.giveBack(worker);
      return reply;
    } catch (error) {
      // A worker that died, timed out or was cancelled is gone; one that answered with an error stays.
      if (worker.broken || timedOut) this.discard(worker, worker.broken ?? (error as Error));
      else this.idle.push(worker);
      throw error;
    } finally {
      clearTimeout(timer);
      call.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * One batch on one worker: as callOn, but one time-out for the batch and its items settled one by one. The wait to
   * fill the batch and for a free worker is each item's queue wait; the batch's own time is each item's latency. A
   * cancelled item leaves at once; the worker is ended only when every item of its batch was cancelled.
   */
  private async callBatch(items: BatchItem[]): Promise<void> {
    if (this.closed) throw new TargetError(`${this.options.what} was stopped`, 'failed', { retryable: false });
    const worker = this.take();
    const id = this.nextId++;
    let timedOut = false;
    const timeoutMs = Math.max(...items.map((item) => item.call.timeoutMs));
    const timer = setTimeout(() => {
      timedOut = true;
      this.discard(worker, new TargetError(`${this.options.what} did not answer a batch of ${items.length} within ${Math.round(timeoutMs / 1000)} s; the worker was ended and replaced`, 'timeout'));
    }, timeoutMs);
    const onAbort = () => {
      if (items.every((item) => item.call.signal.aborted)) this.discard(worker, abortReason(items[0]!.call.signal));
    };
    for (const item of items) item.call.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await worker.ready;
      const now = Date.now();
      for (const item of items) item.call.onQueued?.(now - item.queuedAt);
      const reply = await worker.call(id, batchRequest(id, items));
      this.giveBack(worker);
      settleBatch(items, reply, this.words);
    } catch (error) {
      if (worker.broken || timedOut) this.discard(worker, worker.broken ?? (error as Error));
      else this.idle.push(worker);
      for (const item of items) item.reject(error as Error);
    } finally {
      clearTimeout(timer);
      for (const item of items) item.call.signal.removeEventListener('abort', onAbort);
    }
  }

  private get words(): ReplyWords {
    return { what: this.options.what, quote, userCodeError };
  }

  private release(): void {
    this.busy--;
    this.waiting.shift()?.();
  }

  private giveBack(worker: Worker): void {
    if (!worker.broken && worker.generation === this.generation && !this.closed) this.idle.push(worker);
    else this.discard(worker, new Error('replaced'));
  }

  /** Waits for one of the pool's `size` slots (a cancel wakes the wait). */
  private async slot(signal: AbortSignal): Promise<void> {
    while (this.busy >= this.size) {
      if (signal.aborted) throw abortReason(signal);
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiting.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    if (this.closed) throw new TargetError(`${this.options.what} was stopped`, 'failed', { retryable: false });
    this.busy++;
  }

  /** An idle worker of this generation, or a new one. */
  private take(): Worker {
    for (;;) {
      const w = this.idle.pop();
      if (!w) break;
      if (!w.broken && w.generation === this.generation) return w;
      this.discard(w, new Error('replaced'));
    }
    const w = new Worker(this.options, this.generation);
    this.live.add(w);
    w.child.once('exit', () => this.live.delete(w));
    return w;
  }

  private discard(w: Worker, why: Error): void {
    this.live.delete(w);
    w.kill(why);
  }
}

/** One prompt's reply: its answer and usage, or the error the worker's code raised on it. */
function singleReply(message: Record<string, unknown>, words: ReplyWords): { answer: string; usage?: TargetUsage } {
  if (typeof message.error === 'string') throw userCodeError(`${words.what} raised: ${quote(message.error)}`, message.traceback);
  if (typeof message.answer !== 'string') {
    throw new TargetError(`${words.what} replied without a text "answer" (got ${describeData(message.answer)})`, 'failed', { retryable: false, cause: 'no answer' });
  }
  const usage = readUsage(message.usage);
  return { answer: message.answer, ...(usage ? { usage } : {}) };
}

/**
 * What the worker's code did wrong on a prompt (an error reply, a batch's list of the wrong length): that prompt's
 * answer, so not retried unless the user asked (see TargetCallPolicy.userCodeRetries). Its traceback, when the reply has
 * one (the Python shim's, already trimmed to the user's frames), follows on the next lines: one per trace, in the
 * failure reason, not in the log too.
 */
function userCodeError(message: string, traceback: unknown): TargetError {
  const trace = typeof traceback === 'string' && traceback.trim() ? `\n${quoteEnd(traceback.trimEnd(), TRACEBACK_CHARS)}` : '';
  return new TargetError(`${message}${trace}`, 'failed', { retryable: true, userCode: true, cause: 'worker error' });
}

/** Control characters (but tabs and line ends) shown as escapes: a worker's text cannot redraw a terminal. */
function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The start of a text a worker wrote, capped, control characters shown as escapes. */
function quote(text: string, max = QUOTED): string {
  const shown = escapeControls(text);
  return shown.length > max ? `${shown.slice(0, max)}…` : shown;
}

/** The end of a text (a traceback ends with the innermost frame and the exception), capped, escaped. */
function quoteEnd(text: string, max: number): string {
  const shown = escapeControls(text);
  return shown.length > max ? `…${shown.slice(shown.length - max)}` : shown;
}
