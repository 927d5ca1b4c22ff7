import { abortReason, sleep } from '../api/retry';

/**
 * Adaptive concurrency for target calls (AIMD): a rate-limit answer halves the limit (not below 1, at most
 * once per cool-down so a burst of 429s counts once) and pauses everyone for the Retry-After; successes grow
 * the limit back by one per `limit` successes, up to the configured maximum.
 */
export class AdaptiveLimiter {
  private active = 0;
  private successes = 0;
  private pausedUntil = 0;
  private lastCut = 0;
  private waiters: Array<() => void> = [];
  limit: number;

  constructor(
    readonly max: number,
    private readonly coolDownMs = 1000,
  ) {
    this.limit = max;
  }

  async acquire(signal: AbortSignal): Promise<void> {
    for (;;) {
      const pause = this.pausedUntil - Date.now();
      if (pause > 0) await sleep(pause, signal);
      else if (this.active < this.limit) {
        this.active++;
        return;
      } else await this.waitForRelease(signal);
    }
  }

  release(outcome: 'success' | 'failure'): void {
    this.active--;
    if (outcome === 'success' && this.limit < this.max && ++this.successes >= this.limit) {
      this.limit++;
      this.successes = 0;
    }
    this.waiters.shift()?.();
  }

  rateLimited(retryAfterMs: number | undefined): void {
    const now = Date.now();
    if (now - this.lastCut >= this.coolDownMs) {
      this.limit = Math.max(1, Math.floor(this.limit / 2));
      this.successes = 0;
      this.lastCut = now;
    }
    if (retryAfterMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, now + retryAfterMs);
  }

  private waitForRelease(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        reject(abortReason(signal));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(wake);
    });
  }
}

/** A plain counting gate: at most `size` holders at once; the others wait, in order. */
export class Gate {
  private held = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async enter(): Promise<void> {
    while (this.held >= this.size) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.held++;
  }

  leave(): void {
    this.held--;
    this.waiters.shift()?.();
  }
}
