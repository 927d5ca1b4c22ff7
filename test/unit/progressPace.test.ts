import assert from 'node:assert/strict';
import { BAR_PACE_MS, BarPace, Beat, BEAT_SLACK_MS, PROGRESS_PACE_MS, ProgressPace, STATUS_PACE_MS } from '../../src/extension/progressPace';
import type { PaceClock } from '../../src/extension/progressPace';

/** A clock that moves only when told, running each timer when its time comes. */
class FakeClock implements PaceClock {
  private time = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;
  now(): number {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].fn();
    }
    this.time = until;
  }
}

/** The window's progress: one coalesced stream for the toast, the status bar, the tree and Run Details. */
describe('ProgressPace', () => {
  it('emits at most four updates a second of input, whatever the input rate, and always the latest', () => {
    const clock = new FakeClock();
    const emitted: { value: number; at: number }[] = [];
    const pace = new ProgressPace<number>((value) => emitted.push({ value, at: clock.now() }), PROGRESS_PACE_MS, clock);
    // A runner sending 1,000 updates a second for 10 s.
    for (let i = 1; i <= 10_000; i++) {
      pace.push(i);
      clock.advance(1);
    }
    assert.ok(emitted.length <= 10 * (1000 / PROGRESS_PACE_MS) + 1, `${emitted.length} updates in 10 s`);
    assert.ok(emitted.length >= 10 * (1000 / PROGRESS_PACE_MS) - 1, `${emitted.length} updates in 10 s: the pace holds them back too much`);
    for (let i = 1; i < emitted.length; i++) assert.ok(emitted[i]!.at - emitted[i - 1]!.at >= PROGRESS_PACE_MS, 'two updates closer than the pace');
    // Each is the latest pushed when it was emitted: nothing stale is drawn.
    for (const e of emitted) assert.equal(e.value, e.at === 0 ? 1 : e.at);
  });

  it('never drops the last update: it comes when its turn does, or at once on flush', () => {
    const clock = new FakeClock();
    const emitted: number[] = [];
    const pace = new ProgressPace<number>((value) => emitted.push(value), 250, clock);
    pace.push(1);
    pace.push(2);
    pace.push(3);
    assert.deepEqual(emitted, [1]);
    clock.advance(250);
    assert.deepEqual(emitted, [1, 3]);
    pace.push(4);
    pace.push(5);
    pace.flush();
    assert.deepEqual(emitted, [1, 3, 5]);
    clock.advance(1000);
    assert.deepEqual(emitted, [1, 3, 5], 'a flushed update is not emitted twice');
    pace.push(6);
    pace.dispose();
    pace.push(7);
    clock.advance(1000);
    assert.deepEqual(emitted, [1, 3, 5, 6], 'dispose emits what waits, then takes no more');
  });

  it("moves the toast's bar once per BAR_PACE_MS at most, to where the run is, and to the end at once", () => {
    const clock = new FakeClock();
    const bar = new BarPace(BAR_PACE_MS, clock);
    // Updates at the pace over 10 s of a run 1.25 % further each time; then its last one, at 100 %.
    const moves: number[] = [];
    let shown = 0;
    for (let i = 1; i <= 40; i++) {
      const step = bar.step(i * 1.25);
      if (step > 0) moves.push(clock.now());
      shown += step;
      // Where the run was at the bar's last move.
      const movedAt = Math.floor(clock.now() / BAR_PACE_MS) * BAR_PACE_MS;
      assert.equal(shown, (movedAt / PROGRESS_PACE_MS + 1) * 1.25);
      clock.advance(PROGRESS_PACE_MS);
    }
    assert.equal(moves.length, Math.ceil(10_000 / BAR_PACE_MS), `${moves.length} moves in 10 s`);
    for (let i = 1; i < moves.length; i++) assert.ok(moves[i]! - moves[i - 1]! >= BAR_PACE_MS, 'two moves closer than the pace');
    assert.equal(shown + bar.step(100), 100, 'the run done: the bar is full at once');
    assert.equal(bar.step(100), 0);
  });
  it("draws once a second on the update that ends it, a change of state at once, and the last change by one timer", () => {
    const clock = new FakeClock();
    const drawn: number[] = [];
    const beat = new Beat(() => drawn.push(clock.now()), STATUS_PACE_MS, clock);
    // 10 s of updates at the toast's pace, the run paused from 4.25 s to 6.25 s: each second is drawn by an update, in
    // its tick (so in the toast's frame), never by a timer of its own.
    for (let at = 0; at < 10_000; at += PROGRESS_PACE_MS) {
      beat.changed(at >= 4_250 && at < 6_250 ? 'paused' : 'running');
      clock.advance(PROGRESS_PACE_MS);
    }
    assert.deepEqual(drawn, [0, 1000, 2000, 3000, 4000, 4250, 5250, 6250, 7250, 8250, 9250]);
    // The last update (9.75 s) came within its second and no update follows: one timer draws it, after the slack.
    clock.advance(5000);
    assert.deepEqual(drawn.slice(11), [9250 + STATUS_PACE_MS + BEAT_SLACK_MS], 'the last change is drawn once, by the timer');
    beat.changed('done');
    assert.equal(drawn.length, 13, 'a change of state is drawn at once');
  });

  it('keeps one timer, drawn no later than asked, and none once cancelled', () => {
    const clock = new FakeClock();
    const drawn: number[] = [];
    const beat = new Beat(() => drawn.push(clock.now()), STATUS_PACE_MS, clock);
    beat.changed();
    clock.advance(100);
    beat.changed();
    beat.changed();
    // Held back, a second and its slack after the draw; the run ends meanwhile: its end is drawn within 250 ms, not
    // when the run's timer is due.
    beat.within(250);
    beat.within(250);
    clock.advance(5000);
    assert.deepEqual(drawn, [0, 350], 'one draw of the changes held back, when the earlier timer was due');
    beat.changed();
    clock.advance(100);
    beat.changed();
    beat.within(2000);
    clock.advance(5000);
    assert.deepEqual(drawn, [0, 350, 5100, 5100 + STATUS_PACE_MS + BEAT_SLACK_MS], 'a later timer does not replace an earlier one');
    beat.changed();
    clock.advance(100);
    beat.changed();
    beat.cancel();
    clock.advance(5000);
    assert.deepEqual(drawn.slice(4), [10_200], 'cancelled (the run ended, the window is disposed): nothing is drawn after');
  });
});
