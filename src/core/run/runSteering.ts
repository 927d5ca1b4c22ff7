// Steering a run from outside while it goes on (eval-runner pause / resume / set --concurrency, the editor's
// buttons): the host makes one RunSteering, gives it to the engine (EngineOptions.steering) and to whatever listens
// for the user (the runner protocol). A steer before the engine is ready is kept and applied when it attaches.
import type { RateScheduler } from './rateScheduler';

/** What a steer did, as the journal keeps it in the run's history. */
export type SteerEvent = { ev: 'pause' } | { ev: 'resume' } | { ev: 'concurrency'; n: number };

/** Where a run's steering stands: acknowledged to whoever steered. */
export interface SteeringState {
  paused: boolean;
  /** Calls in flight at most now (undefined: the run has not started calling yet and keeps its own). */
  concurrency: number | undefined;
}

/** What the engine lends the steering: its target pace, more loops when the concurrency rises, and the journal. */
export interface SteeredEngine {
  pace: RateScheduler;
  /** The concurrency rose to n: the engine takes more traces at once. */
  widen(n: number): void;
  /** Journals the steer in the run's history (resolved once it is written, or could not be). */
  note(event: SteerEvent): Promise<void>;
}

export const MAX_STEERED_CONCURRENCY = 1024;

export class RunSteering {
  private engine: SteeredEngine | undefined;
  private paused = false;
  private concurrency: number | undefined;
  /** Steers made before the engine attached, journaled once it has. */
  private early: SteerEvent[] = [];
  private readonly listeners = new Set<(state: SteeringState) => void>();

  get state(): SteeringState {
    return { paused: this.paused, concurrency: this.engine?.pace.maxInFlight ?? this.concurrency };
  }

  /** Told each time the state changes (the host's progress line, a window's buttons). */
  onChange(listener: (state: SteeringState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls in flight finish; no new call starts until resume. The run keeps its lock and its place. */
  pause(): Promise<SteeringState> {
    this.paused = true;
    this.engine?.pace.pause();
    return this.steered({ ev: 'pause' });
  }

  resume(): Promise<SteeringState> {
    this.paused = false;
    this.engine?.pace.resume();
    return this.steered({ ev: 'resume' });
  }

  setConcurrency(n: number): Promise<SteeringState> {
    if (!Number.isInteger(n) || n < 1 || n > MAX_STEERED_CONCURRENCY) return Promise.reject(new RangeError(`The concurrency must be a whole number from 1 to ${MAX_STEERED_CONCURRENCY}, not ${String(n)}.`));
    this.concurrency = n;
    if (this.engine) this.apply(this.engine, n);
    return this.steered({ ev: 'concurrency', n });
  }

  /** The engine is calling the target: steers made so far take effect and are journaled. */
  attach(engine: SteeredEngine): void {
    this.engine = engine;
    if (this.paused) engine.pace.pause();
    if (this.concurrency !== undefined) this.apply(engine, this.concurrency);
    for (const event of this.early.splice(0)) void engine.note(event);
    this.changed();
  }

  /** The run ended: steers are no longer applied (a later one is kept for nothing). */
  detach(): void {
    this.engine = undefined;
  }

  private apply(engine: SteeredEngine, n: number): void {
    const before = engine.pace.maxInFlight;
    engine.pace.setConcurrency(n);
    if (n > before) engine.widen(n);
  }

  private async steered(event: SteerEvent): Promise<SteeringState> {
    if (this.engine) await this.engine.note(event);
    else this.early.push(event);
    this.changed();
    return this.state;
  }

  private changed(): void {
    const state = this.state;
    for (const listener of this.listeners) listener(state);
  }
}
