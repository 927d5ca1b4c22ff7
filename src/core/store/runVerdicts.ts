import type { Verdict } from '../journal/journalRecords';

/** A reviewer's verdict on one run's answer to a trace, and the note with it. */
export interface RunVerdict {
  rating: Verdict | undefined;
  note: string | undefined;
}

/** The verdicts as the index keeps them: [run, trace, rating, note] (arrays, so a trace id is never an object key). */
export type RunVerdictImage = Array<[run: string, traceId: string, rating: Verdict | null, note: string | null]>;

/** The run key of answers journaled before there were runs. */
const NO_RUN = '';

/**
 * Every verdict by the run whose answer it judged, then by trace: a verdict stays with its answer when a later run
 * answers again (a fresh run sets the answers aside, not their verdicts), so an older run's export and Compare Runs
 * still show it. Verdicts are a person's work, a few thousand at most: a map per run is small.
 */
export class RunVerdicts {
  private readonly byRun = new Map<string, Map<string, RunVerdict>>();
  private count = 0;

  constructor(image: RunVerdictImage = []) {
    for (const [run, traceId, rating, note] of image) this.set(run, traceId, { rating: rating ?? undefined, note: note ?? undefined });
  }

  get size(): number {
    return this.count;
  }

  get(run: string | undefined, traceId: string): RunVerdict | undefined {
    return this.count === 0 ? undefined : this.byRun.get(run ?? NO_RUN)?.get(traceId);
  }

  /** Sets one run's verdict on a trace; no rating and no note clears it. */
  set(run: string | undefined, traceId: string, verdict: RunVerdict | undefined): void {
    const key = run ?? NO_RUN;
    let traces = this.byRun.get(key);
    const had = traces?.has(traceId) ?? false;
    if (!verdict || (verdict.rating === undefined && !verdict.note)) {
      if (had) {
        traces!.delete(traceId);
        this.count--;
      }
      return;
    }
    if (!traces) this.byRun.set(key, (traces = new Map<string, RunVerdict>()));
    traces.set(traceId, { rating: verdict.rating, note: verdict.note || undefined });
    if (!had) this.count++;
  }

  image(): RunVerdictImage {
    const out: RunVerdictImage = [];
    for (const [run, traces] of this.byRun) for (const [traceId, v] of traces) out.push([run, traceId, v.rating ?? null, v.note ?? null]);
    return out;
  }
}
