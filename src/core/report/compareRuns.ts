import type { TextSource } from '../journal/journalText';
import { ANSWER_FLAG } from '../store/runAnswers';
import type { RunAnswers } from '../store/runAnswers';
import type { TraceStore } from '../store/traceStore';

/** One run's answer to one trace, as journaled: the text is read from the journal when asked for. */
export interface RunAnswer {
  readonly answer: string;
  latencyMs: number | undefined;
  errorAnswer: boolean;
  by: 'target' | 'user';
}

export interface ComparedTrace {
  traceId: string;
  readonly prompt: string | undefined;
  a: RunAnswer | undefined;
  b: RunAnswer | undefined;
  /** Both runs answered and the answers differ, or only one of them answered. */
  differs: boolean;
}

/** A run's answer kept as its slot in the run's answers (a place and a digest): its text is read when asked for. */
class PlacedAnswer implements RunAnswer {
  readonly latencyMs: number | undefined;
  readonly errorAnswer: boolean;
  readonly by: 'target' | 'user';

  constructor(
    private readonly answers: RunAnswers,
    readonly slot: number,
    private readonly source: TextSource,
  ) {
    const flags = answers.flags(slot);
    this.latencyMs = answers.latencyMs(slot);
    this.errorAnswer = (flags & ANSWER_FLAG.err) !== 0;
    this.by = (flags & ANSWER_FLAG.user) !== 0 ? 'user' : 'target';
  }

  get answer(): string {
    return this.answers.text(this.slot, this.source);
  }
}

/**
 * One trace of the comparison: its answers made when asked for (the table reads those of the rows it shows), so
 * 100,000 rows cost a few fields each, not three objects with accessors (most of the time was the collector's).
 */
class ComparedRow implements ComparedTrace {
  constructor(
    readonly traceId: string,
    private readonly store: TraceStore,
    private readonly source: TextSource,
    private readonly answersA: RunAnswers | undefined,
    private readonly slotA: number,
    private readonly answersB: RunAnswers | undefined,
    private readonly slotB: number,
    readonly differs: boolean,
  ) {}

  get prompt(): string | undefined {
    return this.store.get(this.traceId)?.prompt;
  }

  get a(): RunAnswer | undefined {
    return this.slotA >= 0 ? new PlacedAnswer(this.answersA!, this.slotA, this.source) : undefined;
  }

  get b(): RunAnswer | undefined {
    return this.slotB >= 0 ? new PlacedAnswer(this.answersB!, this.slotB, this.source) : undefined;
  }
}

/**
 * Every trace's answers in two runs of one evaluation, in the store's order: a lookup in the answers the store keeps
 * for each run (their places in the journal and digests, kept as they are journaled and with the index), so nothing
 * is read from the journal until a text is shown. A run's last answer to a trace is its answer; an answer naming no
 * run belongs to the run that was latest when it was written. `store` is the session's, read up to date.
 */
export function compareRuns(store: TraceStore, source: TextSource, runA: string, runB: string): ComparedTrace[] {
  const answersA = store.runAnswers(runA);
  const answersB = store.runAnswers(runB);
  const n = store.traces.size;
  const none = new Int32Array(0);
  const slotsA = answersA?.slotsByRow(n) ?? none;
  const slotsB = answersB?.slotsByRow(n) ?? none;
  const out: ComparedTrace[] = [];
  let row = 0;
  for (const traceId of store.traces.keys()) {
    const sa = slotsA[row] ?? -1;
    const sb = slotsB[row++] ?? -1;
    if (sa < 0 && sb < 0) continue;
    const differs = sa < 0 || sb < 0 || !answersA!.sameText(sa, answersB!, sb);
    out.push(new ComparedRow(traceId, store, source, answersA, sa, answersB, sb, differs));
  }
  return out;
}
