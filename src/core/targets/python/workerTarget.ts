// The worker target: a pool of worker processes (one is ./workerProcess.ts, which also states the protocol),
// spreading the run's concurrency over them, one prompt or one batch (./workerBatches.ts) per request.
import { abortReason } from '../../../api/errors';
import { describeData } from '../../../api/schemas';
import { TargetError, readUsage } from '../target';
import type { Target, TargetCallOptions, TargetUsage } from '../target';
import { BatchGatherer, batchRequest, settleBatch } from './workerBatches';
import type { BatchItem, ReplyWords } from './workerBatches';
import { TRACEBACK_CHARS, Worker, quote, quoteEnd } from './workerProcess';
import type { WorkerTargetOptions } from './workerProcess';

export type { WorkerTargetOptions } from './workerProcess';

export interface WorkerTarget extends Target {
  /** Workers start afresh before the next request (the file changed); busy ones after their answer. */
  restart(): void;
  /** The pids of the live workers (tests check that none is left). */
  readonly pids: number[];
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
