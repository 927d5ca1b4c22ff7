import type { Journal } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import type { TraceStore } from './traceStore';

/**
 * The one way a record is written: appended to the journal and applied to the store, the same record (one
 * timestamp for both). Resolves once it is on disk; the store shows it at once, holding its texts until then and
 * their place in the journal after. A write that fails leaves the journal's failure set (and the texts held), and a
 * session that sees it reads the journal whole again.
 */
export function commit(journal: Journal, store: TraceStore, record: JournalRecord): Promise<void> {
  const { durable, at } = journal.place(record);
  store.apply(record);
  // Only a record with a text has one to settle: a submission's (one per trace) needs no second step.
  if (!at || !('id' in record) || !('a' in record || 'p' in record)) return durable;
  return durable.then(() => store.settle(record, at));
}

/** commit for several records, as one write to the journal (a batch of the prompt list). */
export function commitAll(journal: Journal, store: TraceStore, records: readonly JournalRecord[]): Promise<void> {
  const { durable, at } = journal.placeAll(records);
  for (const record of records) store.apply(record);
  return durable.then(() => {
    for (let i = 0; i < records.length; i++) store.settle(records[i]!, at[i]);
  });
}
