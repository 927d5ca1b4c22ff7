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
  if (!at || !('id' in record)) return durable;
  return durable.then(() => store.settle(record, at));
}
