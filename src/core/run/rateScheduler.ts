import { abortReason } from '../../api/retry';
import type { RateInfo } from '../targets/rateHeaders';

export interface RateSchedulerOptions {
  /** Requests in flight at most. */
  concurrency: number;
  /** A fixed cap the user knows (--max-rpm), requests per second. */
  maxPerSecond?: number;
  /** Pace before anything is known, requests per second (default: concurrency per second). */
  initialPerSecond?: number;
  /** Probe upwards after this long without a rate limit. */
  quietMs?: number;
}

// On a 429 the pace drops to just under what the endpoint admitted lately, at most once per round trip (a
// burst of rejections is one signal); after a quiet window it climbs by a twentieth per round trip, never past
// a known limit. Under a limit the endpoint announced, the pace stays this far below it (clocks differ).
const DECREASE_TO = 0.9;
const INCREASE_BY = 1.05;
const HEADER_MARGIN = 0.95;
const MIN_PER_SECOND = 0.2;
// Until an answer says how long calls take, assume a second (a slow hosted model), so the first starts are
// spread over it rather than sent as one burst.
const INITIAL_LATENCY_MS = 1000;

/**
 * Schedules calls to a rate-limited endpoint: at most `concurrency` in flight, started at an even pace (never
 * a burst). Until the endpoint shows a limit, the pace is twice what the concurrency allows at the calls'
 * latency (it only spreads the starts; the concurrency is what binds).
 * The limit is learned from the endpoint's rate-limit headers when it sends them (the pace starts right
 * there), else from its 429s (down to what it admitted) and quiet periods (gently up). A Retry-After belongs
 * to the request that got it; the others keep the pace.
 */
export class RateScheduler {
  private active = 0;
  private nextStartAt = 0;
  private rate: number;
  private ceiling: number;
  /** True once a 429, a limit header or the user's cap says there is a limit to keep under. */
  private limited: boolean;
  private latencyMs = INITIAL_LATENCY_MS;
  private readonly waiters: Array<{ wake: () => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private lastDecrease = -Infinity;
  private lastLimited = -Infinity;
  private lastIncrease = -Infinity;
  /**
   * Calls started, and those the endpoint refused, over the last seconds. Starts less refusals is what it
   * admitted: known at once, where admitted answers come back a round trip later.
   */
  private readonly starts = new SlidingCount();
  private readonly refused = new SlidingCount();
  private pacedSince: number | undefined;
  private firstStart: number | undefined;
  /** In flight at most: the option's, until the user changes it mid-run (setConcurrency). */
  private concurrency: number;
  /** Paused: calls in flight finish, none starts (see pause). */
  private paused = false;

  constructor(private readonly options: RateSchedulerOptions) {
    this.concurrency = options.concurrency;
    this.ceiling = options.maxPerSecond ?? Infinity;
    this.limited = options.maxPerSecond !== undefined;
    // Before any answer: the concurrency spread over the assumed second, so a slow model's bucket is not hit
    // with every slot at once; the first answers lift it to what their latency allows.
    this.rate = Math.min(this.ceiling, options.initialPerSecond ?? this.concurrencyBound());
  }

  /** True once a 429, a limit header or a cap says there is a limit to keep under. */
  get isLimited(): boolean {
    return this.limited;
  }

  /** A call started outside acquire() (an endpoint not paced yet): counted for the first 429's estimate. */
  noteStart(now = performance.now()): void {
    this.firstStart ??= now;
    this.starts.add(now);
  }

  /** Calls in flight at most, now. */
  get maxInFlight(): number {
    return this.concurrency;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** No call starts until resume(); those in flight finish. Waiters keep their place. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** Calls in flight at most from now on: a lower one lets those in flight finish, and starts none until below it. */
  setConcurrency(n: number): void {
    // The pace follows at the next answer (release): what binds is the concurrency.
    this.concurrency = Math.max(1, Math.floor(n));
    this.pump();
  }

  /** The pace now, requests per second. */
  get perSecond(): number {
    return this.rate;
  }

  /** The pace, when calls have been waiting for it a while (the rate limit holds the run back); else undefined. */
  get holdingBack(): number | undefined {
    return this.limited && this.pacedSince !== undefined && performance.now() - this.pacedSince > 200 ? this.rate : undefined;
  }

  /** Starts a call now when nothing waits and the pace allows it (no promise); false: acquire() waits its turn. */
  startNow(signal: AbortSignal): boolean {
    return !signal.aborted && this.waiters.length === 0 && this.tryStart();
  }

  async acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw abortReason(signal);
    if (this.waiters.length === 0 && this.tryStart()) return;
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        wake: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(abortReason(signal));
        this.pump();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** The call ended after `ms`; `admitted`: the endpoint took it (any answer but a rate limit). */
  release(admitted: boolean, ms: number, info?: RateInfo): void {
    this.active--;
    const now = performance.now();
    if (admitted) {
      this.latencyMs = this.latencyMs === INITIAL_LATENCY_MS ? Math.max(1, ms) : this.latencyMs * 0.8 + Math.max(1, ms) * 0.2;
      if (!this.limited) this.rate = Math.min(this.ceiling, 2 * this.concurrencyBound());
      else this.maybeIncrease(now);
    }
    if (info) this.observe(info);
    this.pump();
  }

  /** A 429: slow down to just under what the endpoint admitted lately (once per round trip; true when it did). */
  rateLimited(info?: RateInfo): boolean {
    const now = performance.now();
    this.refused.add(now);
    this.lastLimited = now;
    this.limited = true;
    if (info) this.observe(info);
    if (now - this.lastDecrease < Math.max(100, this.latencyMs)) return false;
    this.lastDecrease = now;
    const admittedRate = this.admittedPerSecond(now);
    // What was admitted is the best estimate of the limit; never more than the pace that just failed.
    // With nothing admitted lately: half the pace, or one a second for an endpoint that was not paced at all.
    const estimate = admittedRate > 0 ? admittedRate : Number.isFinite(this.rate) ? this.rate / 2 : 1;
    this.rate = Math.max(MIN_PER_SECOND, Math.min(this.rate, estimate) * DECREASE_TO);
    return true;
  }

  /** Limit headers set the pace (and its ceiling) outright; a window with nothing left delays the next start. */
  observe(info: RateInfo): void {
    if (info.requestsPerSecond !== undefined && info.requestsPerSecond > 0) {
      this.ceiling = Math.min(this.options.maxPerSecond ?? Infinity, info.requestsPerSecond * HEADER_MARGIN);
      if (!this.limited || this.rate > this.ceiling) this.rate = this.ceiling;
      this.limited = true;
    }
    if (info.remaining === 0) {
      const wait = Math.min(info.resetMs ?? Infinity, 1000 / this.rate);
      this.nextStartAt = Math.max(this.nextStartAt, performance.now() + wait);
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** What the concurrency allows at the calls' latency, requests per second. */
  private concurrencyBound(): number {
    return (this.concurrency * 1000) / this.latencyMs;
  }

  /** The window the admitted rate is measured over: a few round trips, at least half a second. */
  private windowMs(): number {
    return Math.max(500, 2 * this.latencyMs);
  }

  private admittedPerSecond(now: number): number {
    // Early in a run the window is what has passed since the first call, not more.
    const window = Math.min(this.windowMs(), now - (this.firstStart ?? now));
    if (window <= 0) return 0;
    return Math.max(0, this.starts.since(now, window) - this.refused.since(now, window)) / (window / 1000);
  }

  private maybeIncrease(now: number): void {
    // Up only when the pace is what holds calls back, a window after the last limit, once per round trip.
    const window = this.windowMs();
    const roundTrip = Math.max(250, this.latencyMs);
    if (this.pacedSince === undefined || now - this.lastLimited < window || now - this.lastIncrease < roundTrip) return;
    this.lastIncrease = now;
    this.rate = Math.min(this.ceiling, this.rate * INCREASE_BY);
  }

  /** Starts one call now if a slot is free and the pace allows; true when it did. */
  private tryStart(): boolean {
    if (this.paused || this.active >= this.concurrency) return false;
    const now = performance.now();
    // Within a millisecond counts as on time: timers have that resolution, and at thousands of calls a second
    // pacing would otherwise cap the rate at one start per timer tick.
    if (this.nextStartAt - now >= 1) return false;
    // Evenly spaced starts; time with nothing to send does not bank a burst.
    this.nextStartAt = Math.max(now, this.nextStartAt) + 1000 / this.rate;
    this.noteStart(now);
    this.active++;
    return true;
  }

  /** Wakes waiters while slots and the pace allow; else sets a timer for the next start. */
  private pump(): void {
    while (this.waiters.length > 0 && this.tryStart()) this.waiters.shift()!.wake();
    if (this.waiters.length === 0 || this.active >= this.concurrency || this.paused) {
      // Nothing waits, or it waits for a slot (a release will pump) or for resume(), not for the pace.
      this.pacedSince = undefined;
      return;
    }
    this.pacedSince ??= performance.now();
    if (!this.timer) {
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.pump();
        },
        Math.max(0, this.nextStartAt - performance.now()),
      );
    }
  }
}

/** Events per 50 ms slot over the last 6.4 s: O(1) to count and to ask, nothing allocated per event. */
class SlidingCount {
  private static readonly SLOT_MS = 50;
  private readonly slots = new Float64Array(128);
  private readonly stamps = new Float64Array(128).fill(-1);

  add(now: number): void {
    const slot = Math.floor(now / SlidingCount.SLOT_MS);
    const i = slot % 128;
    if (this.stamps[i] !== slot) {
      this.stamps[i] = slot;
      this.slots[i] = 0;
    }
    this.slots[i]!++;
  }

  since(now: number, windowMs: number): number {
    const last = Math.floor(now / SlidingCount.SLOT_MS);
    const first = Math.floor((now - Math.min(windowMs, 127 * SlidingCount.SLOT_MS)) / SlidingCount.SLOT_MS);
    let count = 0;
    for (let slot = first; slot <= last; slot++) if (this.stamps[slot % 128] === slot) count += this.slots[slot % 128]!;
    return count;
  }
}
