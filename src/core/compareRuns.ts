import { createHash } from 'node:crypto';
import { readJournal } from './journal';
import type { RecordLocation } from './journal';
import type { TextSource } from './journalText';
import type { TraceStore } from './traceStore';

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

/** An answer kept as its place and a digest of its text (whether two runs' answers differ needs no text kept). */
class PlacedAnswer implements RunAnswer {
  constructor(
    private readonly source: TextSource,
    private readonly at: RecordLocation,
    readonly digest: string,
    readonly latencyMs: number | undefined,
    readonly errorAnswer: boolean,
    readonly by: 'target' | 'user',
  ) {}

  get answer(): string {
    return this.source.read(this.at.offset, this.at.length, 'a');
  }
}

/**
 * Every trace's answers in two runs of one evaluation, from the journal alone (it keeps every run's answers; no
 * service call), read through once: an answer belongs to the run it names, or (older records) to the run that was
 * latest when it was written; a run's last answer to a trace is its answer. Only places and digests are kept, so
 * 100,000 traces of 2 KB answers cost a few megabytes; `store` (the session's, read up to date) gives the order, the
 * prompts, and reads the answers back.
 */
export async function compareRuns(journalFile: string, store: TraceStore, source: TextSource, runA: string, runB: string): Promise<ComparedTrace[]> {
  const answers = new Map<string, Map<string, PlacedAnswer>>([
    [runA, new Map()],
    [runB, new Map()],
  ]);
  let runs = 0;
  let current: string | undefined;
  await readJournal(journalFile, undefined, () => (record, at) => {
    // The same ids the store gives runs recorded without one.
    if (record.t === 'run') current = record.run ?? `legacy-${++runs}`;
    if (record.t === 'run' && record.run) runs++;
    if (record.t !== 'answer') return;
    const map = answers.get(record.run ?? current ?? '');
    map?.set(record.id, new PlacedAnswer(source, at, digest(record.a), record.ms, record.err ?? false, record.by ?? 'target'));
  });
  const out: ComparedTrace[] = [];
  for (const info of store.traces.values()) {
    const a = answers.get(runA)!.get(info.traceId);
    const b = answers.get(runB)!.get(info.traceId);
    if (!a && !b) continue;
    out.push({
      traceId: info.traceId,
      get prompt() {
        return info.prompt;
      },
      a,
      b,
      differs: a?.digest !== b?.digest,
    });
  }
  return out;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}
