import { abortReason } from '../../../api/errors';
import { describeData } from '../../../api/schemas';
import { TargetError, readUsage } from '../target';
import type { TargetCallOptions } from '../target';

/**
 * Batches for a batch function (the python target's --batch-size): prompts gathered here, on the TypeScript side,
 * and sent to one worker as one request line; the worker calls the function once per batch and replies per item.
 *   in:  {"id": 7, "batch": [{"prompt": "…", "traceId": "…", "evaluationId": 1, "kind": "benchmark"}, …]}
 *   out: {"id": 7, "answers": [{"answer": "…", "usage"?: {…}} or {"error": "…"}, …]} (one per prompt, in order)
 *        or {"id": 7, "error": "…", "traceback"?: "…"}: the function failed on the whole batch.
 */
export interface BatchOptions {
  /** The most prompts in one call. */
  size: number;
  /** How long the oldest waiting prompt waits for the batch to fill before it is sent as it is. */
  waitMs: number;
}

export const DEFAULT_BATCH_WAIT_MS = 20;

/** One prompt waiting for (or in) a batch; settled once, whichever comes first (its answer, an error, a cancel). */
export interface BatchItem {
  prompt: string;
  call: TargetCallOptions;
  queuedAt: number;
  settled: boolean;
  resolve(answer: string): void;
  reject(error: Error): void;
}

/** What the gatherer needs of the pool: its worker slots, and a way to send one batch. */
export interface BatchPool {
  /** Waits for one of the pool's slots (a free worker); throws once the pool is closed. */
  acquire(): Promise<void>;
  release(): void;
  /** Sends the batch to a worker and settles every item; never rejects. */
  run(items: BatchItem[]): Promise<void>;
}

/**
 * Prompts queue here; a free worker takes up to `size` of them, as soon as that many wait or once the oldest has
 * waited `waitMs`. Taking the worker first and then filling its batch means a busy pool fills batches while it works.
 */
export class BatchGatherer {
  private readonly queue: BatchItem[] = [];
  private pumping = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly options: BatchOptions,
    private readonly pool: BatchPool,
  ) {}

  send(prompt: string, call: TargetCallOptions): Promise<string> {
    if (call.signal.aborted) return Promise.reject(abortReason(call.signal));
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => {
        const at = this.queue.indexOf(item);
        if (at >= 0) this.queue.splice(at, 1);
        if (this.queue.length === 0) this.wake?.();
        item.reject(abortReason(call.signal));
      };
      const settle = () => {
        if (item.settled) return false;
        item.settled = true;
        call.signal.removeEventListener('abort', onAbort);
        return true;
      };
      const item: BatchItem = {
        prompt,
        call,
        queuedAt: Date.now(),
        settled: false,
        resolve: (answer) => {
          if (settle()) resolve(answer);
        },
        reject: (error) => {
          if (settle()) reject(error);
        },
      };
      call.signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(item);
      if (this.queue.length >= this.options.size) this.wake?.();
      void this.pump();
    });
  }

  /** The pool is closing: what still waits fails with `why`. */
  close(why: Error): void {
    for (const item of this.queue.splice(0)) item.reject(why);
    this.wake?.();
  }

  /** One loop at a time: a slot, then a batch for it, then the next; it ends when nothing waits. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        await this.pool.acquire();
        const batch = await this.gather();
        if (batch.length === 0) {
          this.pool.release();
          continue;
        }
        void this.pool
          .run(batch)
          .catch((error: unknown) => batch.forEach((item) => item.reject(error as Error)))
          .finally(() => this.pool.release());
      }
    } catch (error) {
      for (const item of this.queue.splice(0)) item.reject(error as Error);
    } finally {
      this.pumping = false;
    }
  }

  /** Up to `size` waiting prompts, once that many wait or the oldest has waited long enough; none if all were cancelled. */
  private async gather(): Promise<BatchItem[]> {
    for (;;) {
      const oldest = this.queue[0];
      if (!oldest) return [];
      const left = oldest.queuedAt + this.options.waitMs - Date.now();
      if (this.queue.length >= this.options.size || left <= 0) return this.queue.splice(0, this.options.size);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.wake?.(), left);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }
}

/** The request line for one batch: each prompt with its trace's context, in order. */
export function batchRequest(id: number, items: readonly BatchItem[]): Record<string, unknown> {
  return { id, batch: items.map((item) => ({ prompt: item.prompt, ...(item.call.context ?? {}) })) };
}

/** Words for the worker's text (quoted, capped, escaped) and for a failure of the user's code. */
export interface ReplyWords {
  what: string;
  quote: (text: string) => string;
  userCodeError: (message: string, traceback: unknown) => TargetError;
}

/**
 * Settles every item of a batch from the worker's reply: each its own answer (and usage), or an error that says
 * which prompt of which batch. A whole-batch error or a list of the wrong length fails every item of that batch.
 */
export function settleBatch(items: readonly BatchItem[], reply: Record<string, unknown>, words: ReplyWords): void {
  const n = items.length;
  const failAll = (error: TargetError) => items.forEach((item) => item.reject(error));
  if (typeof reply.error === 'string') {
    // With a traceback the function raised; without, it returned something that is not a list.
    const how = typeof reply.traceback === 'string' && reply.traceback.trim() ? 'raised' : 'failed';
    failAll(words.userCodeError(`${words.what} ${how} on a batch of ${n} prompts: ${words.quote(reply.error)}`, reply.traceback));
    return;
  }
  const answers = reply.answers;
  if (!Array.isArray(answers)) {
    failAll(new TargetError(`${words.what} replied to a batch without a list of "answers" (got ${describeData(answers)})`, 'failed', { retryable: false, cause: 'no answer' }));
    return;
  }
  if (answers.length !== n) {
    const said = `${words.what} returned ${answers.length} answer${answers.length === 1 ? '' : 's'} for a batch of ${n} prompts: a batch function returns one answer per prompt, in the same order`;
    failAll(words.userCodeError(said, undefined));
    return;
  }
  items.forEach((item, i) => settleItem(item, answers[i], i, n, words));
}

/** One prompt's own answer in a batch's reply; the error of one item fails that trace only. */
function settleItem(item: BatchItem, value: unknown, index: number, n: number, words: ReplyWords): void {
  const where = `prompt ${index + 1} of a batch of ${n}`;
  const answer = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  if (typeof answer.answer === 'string') {
    const usage = readUsage(answer.usage);
    if (!item.settled) {
      if (usage) item.call.onUsage?.(usage);
      item.call.onBatch?.(n);
    }
    item.resolve(answer.answer);
  } else if (typeof answer.error === 'string') {
    item.reject(words.userCodeError(`${words.what} failed on ${where}: ${words.quote(answer.error)}`, answer.traceback));
  } else {
    item.reject(new TargetError(`${words.what} replied without a text "answer" for ${where} (got ${describeData(value)})`, 'failed', { retryable: false, cause: 'no answer' }));
  }
}
