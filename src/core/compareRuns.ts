import type { JournalRecord } from './journalRecords';
import { TraceStore } from './traceStore';

/** One run's answer to one trace, as journaled. */
export interface RunAnswer {
  answer: string;
  latencyMs: number | undefined;
  errorAnswer: boolean;
  by: 'target' | 'user';
}

export interface ComparedTrace {
  traceId: string;
  prompt: string | undefined;
  a: RunAnswer | undefined;
  b: RunAnswer | undefined;
  /** Both runs answered and the answers differ, or only one of them answered. */
  differs: boolean;
}

/**
 * Every trace's answers in two runs of one evaluation, from the journal alone (it keeps every run's answers;
 * no service call). An answer belongs to the run it names, or (older records) to the run that was latest when
 * it was written; a run's last answer to a trace is its answer.
 */
export function compareRuns(records: Iterable<JournalRecord>, runA: string, runB: string): ComparedTrace[] {
  const store = new TraceStore();
  const answers = { [runA]: new Map<string, RunAnswer>(), [runB]: new Map<string, RunAnswer>() } as Record<string, Map<string, RunAnswer>>;
  for (const record of records) {
    store.apply(record);
    if (record.t !== 'answer') continue;
    const run = record.run ?? store.currentRun?.runId;
    const map = run === undefined ? undefined : answers[run];
    map?.set(record.id, { answer: record.a, latencyMs: record.ms, errorAnswer: record.err ?? false, by: record.by ?? 'target' });
  }
  const out: ComparedTrace[] = [];
  for (const info of store.traces.values()) {
    const a = answers[runA]!.get(info.traceId);
    const b = answers[runB]!.get(info.traceId);
    if (!a && !b) continue;
    out.push({ traceId: info.traceId, prompt: info.prompt, a, b, differs: a?.answer !== b?.answer });
  }
  return out;
}
