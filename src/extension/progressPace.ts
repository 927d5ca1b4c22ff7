// The pace at which a window draws a run's progress: whatever the runner's rate, the toast, the status bar, the tree
// and Run Details are all fed from one coalesced stream, so they never outrun a reader (the status bar draws one
// update a second of it, on the Beat).
// No vscode here: the unit suite drives it with a fake clock.

/** A few updates a second: as fast as anyone reads a count, and each one lays out the workbench. */
export const PROGRESS_PACE_MS = 250;

/** The clock a pace runs on (the real one, or a test's). */
export interface PaceClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_CLOCK: PaceClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Coalesces a stream of updates: at most one emitted per `intervalMs`, always the latest. An update that comes too
 * soon waits for its turn and is replaced by any later one; flush() emits the one waiting at once (a run's last
 * update is never dropped).
 */
export class ProgressPace<T> {
  private lastAt = Number.NEGATIVE_INFINITY;
  private waiting: { value: T } | undefined;
  private timer: unknown;
  private disposed = false;

  constructor(
    private readonly emit: (value: T) => void,
    private readonly intervalMs = PROGRESS_PACE_MS,
    private readonly clock: PaceClock = REAL_CLOCK,
  ) {}

  push(value: T): void {
    if (this.disposed) return;
    this.waiting = { value };
    if (this.timer !== undefined) return;
    const due = this.lastAt + this.intervalMs - this.clock.now();
    if (due <= 0) this.flush();
    else this.timer = this.clock.setTimeout(() => this.flush(), due);
  }

  /** Emits the update waiting, if any, now. */
  flush(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    this.lastAt = this.clock.now();
    this.emit(waiting.value);
  }

  /** Emits what waits, then takes no more. */
  dispose(): void {
    this.flush();
    this.disposed = true;
  }
}

/**
 * How often the toast's bar moves. Each move animates its width for 100 ms (VS Code's discrete bar), six frames in
 * which the workbench paints its whole window: moved once a second, the bar drew 160 of a run's 443 frames (a Chromium
 * trace of the editorrun bench row). Its words, with the counts and the rate, still change with every update.
 */
export const BAR_PACE_MS = 3000;

/** The toast's bar: what a run has done, moved at most once per `intervalMs`, and at once when the run is done. */
export class BarPace {
  private shown = 0;
  private movedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs = BAR_PACE_MS,
    private readonly clock: Pick<PaceClock, 'now'> = REAL_CLOCK,
  ) {}

  /** The increment to report for a run `percent` done: 0 leaves the bar where it is. */
  step(percent: number): number {
    const now = this.clock.now();
    if (percent <= this.shown || (percent < 100 && now - this.movedAt < this.intervalMs)) return 0;
    const increment = percent - this.shown;
    this.shown = percent;
    this.movedAt = now;
    return increment;
  }
}

/**
 * How often the status bar's counts change: a glance, not a read (the toast's words change with every update). Each
 * change is a message to the workbench and a layout of its status bar: at four a second, the status bar and the toast
 * together were most of the ten messages a second the renderer handled during a run.
 */
export const STATUS_PACE_MS = 1000;

/**
 * How long after its second a held-back draw waits for a progress update to carry it: during a run one comes every
 * PROGRESS_PACE_MS, so the timer only draws a last change that no update follows.
 */
export const BEAT_SLACK_MS = PROGRESS_PACE_MS + 50;

/**
 * Draws what changed at most once per `intervalMs`, on the beat of the paced progress: a change is drawn at once when
 * its second is up, which during a run is with the progress update that ends the second, so the draw goes to the
 * workbench in the same message as the toast's words and is painted in their frame (not a frame of its own). A change
 * before then waits for one timer, BEAT_SLACK_MS after the second, which the next update beats: a last change is
 * never left undrawn. The status bar, the tree's line and Run Details each draw on one.
 */
export class Beat {
  private drawnAt = Number.NEGATIVE_INFINITY;
  private state = '';
  private timer: unknown;
  private dueAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly draw: () => void,
    private readonly intervalMs = STATUS_PACE_MS,
    private readonly clock: PaceClock = REAL_CLOCK,
  ) {}

  /** Something changed. `state`: what is shown besides the counts (the status bar's paused, held, done); its change is drawn at once. */
  changed(state = ''): void {
    const wait = this.drawnAt + this.intervalMs - this.clock.now();
    if (state === this.state && wait > 0) return this.within(wait + BEAT_SLACK_MS);
    this.state = state;
    this.now();
  }

  /** Draws at once (a timer waiting is dropped: this draw is its). */
  now(): void {
    this.cancel();
    this.drawnAt = this.clock.now();
    this.draw();
  }

  /** Draws within `ms`: by the timer waiting when it is due by then, else by one due then. */
  within(ms: number): void {
    const at = this.clock.now() + ms;
    if (this.timer !== undefined && this.dueAt <= at) return;
    this.cancel();
    this.dueAt = at;
    this.timer = this.clock.setTimeout(() => this.now(), ms);
  }

  /** Drops the timer waiting, if any (the run ended, or what draws is disposed). */
  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
  }
}
