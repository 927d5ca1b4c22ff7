import { readJournal } from '../journal/journal';
import { JournalText } from '../journal/journalText';
import { TraceStore } from '../store/traceStore';
import type { RunInfo } from '../store/traceStore';

/**
 * The run `named` names, as `status` shows runs: its whole id, or the start of exactly one. None is a RangeError (the
 * CLI's usage mistake, exit 2) that lists the runs there are.
 */
export function findRun(runs: readonly RunInfo[], named: string): RunInfo {
  const exact = runs.find((r) => r.runId === named);
  if (exact) return exact;
  const starting = named ? runs.filter((r) => r.runId.startsWith(named)) : [];
  if (starting.length === 1) return starting[0]!;
  const listed = (some: readonly RunInfo[]) => some.map((r) => `${r.runId} (${r.target})`).join(', ') || 'none';
  throw new RangeError(starting.length > 1 ? `"${named}" starts more than one run: ${listed(starting)}.` : `No run "${named}". The runs, oldest first: ${listed(runs)}.`);
}

/**
 * The evaluation as run `named` left it: every trace with the answer it held when the next run began (that run's
 * answers, and older ones it kept), for an older run's export. The latest run's is the store itself. Read from the
 * journal (the store keeps only the latest answers); the texts stay in the journal, read back as they are written
 * out. The verdicts are the store's (see RunVerdicts): those given later, in Compare Runs, count too.
 */
export async function storeAsOfRun(journalFile: string, store: TraceStore, named: string | undefined): Promise<TraceStore> {
  if (named === undefined) return store;
  const runId = findRun(store.runs, named).runId;
  if (store.currentRun?.runId === runId) return store;
  const snapshot = new TraceStore().readFrom(store.textSource ?? new JournalText(journalFile));
  let runs = 0;
  let phase: 'before' | 'in' | 'after' = 'before';
  await readJournal(journalFile, undefined, () => (record, at) => {
    if (record.t === 'run') {
      // The same ids the store gives runs recorded without one (see RunHistory.started).
      const id = record.run ?? `legacy-${runs + 1}`;
      runs++;
      phase = phase === 'in' ? 'after' : id === runId ? 'in' : phase;
    }
    if (phase !== 'after') snapshot.apply(record, at);
  });
  return snapshot;
}
