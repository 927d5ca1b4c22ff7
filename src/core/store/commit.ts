import type { Journal } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import type { TraceStore } from './traceStore';

/**
 * The one way a record is written: appended to the journal and applied to the store, the same record (one
 * timestamp for both). Resolves once it is on disk; the store shows it at once, holding its texts until then and
 * their place in the journal after (told by the journal as the line reaches the disk: no second promise per answer).
 * A write that fails leaves the journal's failure set (and the texts held), and a session that sees it reads the
 * journal whole again.
 */
export function commit(journal: Journal, store: TraceStore, record: JournalRecord): Promise<void> {
  // Only a record with a text has one to settle: a submission's (one per trace) needs no second step.
  const textual = 'id' in record && ('a' in record || 'p' in record);
  const { durable } = journal.place(record, textual ? (at) => store.settle(record, at) : undefined);
  store.apply(record);
  return durable;
}

/**
 * Several records as one write (a batch of the prompt list), applied to the store once they are on disk, each with its
 * place, as a replay applies them: no text is held and settled per record, which cost a 20,000-trace run more than the
 * write. Until then the store does not show them (the list's writer waits for them before the run uses its traces);
 * a write that fails applies them with their texts, held, as commit does.
 */
export function commitAll(journal: Journal, store: TraceStore, records: readonly JournalRecord[]): Promise<void> {
  const { durable, at } = journal.placeAll(records);
  return durable.then(
    () => store.applyPlaced(records, at),
    (error: unknown) => {
      for (const record of records) store.apply(record);
      throw error;
    },
  );
}
