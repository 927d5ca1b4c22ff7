// The Batch API batches a journal tells of (its batch records), kept with the store: a run takes up the open ones.
import type { JournalRecord } from '../journal/journalRecords';

/** One Batch API batch as the journal tells it. */
export interface BatchInfo {
  /** The uploaded input file's id (the key). */
  file: string;
  /** The traces of the file's lines, in order: custom_id "t<i>" is ids[i]. */
  ids: string[];
  /** The batch's id, once it was created. */
  batch: string | undefined;
  /** Its final status once its results are all journaled, or "abandoned"; undefined: open (a run takes it up). */
  end: string | undefined;
  at: number;
}

/** A Batch API batch's records, merged by input file: the first holds the traces, later ones the id and the end. */
export function applyBatch(batches: Map<string, BatchInfo>, record: Extract<JournalRecord, { t: 'batch' }>): void {
  const known = batches.get(record.file);
  if (!known) {
    if (!record.ids) return; // a later record whose first was lost: nothing to take up
    batches.set(record.file, { file: record.file, ids: record.ids, batch: record.batch, end: record.end, at: record.at });
    return;
  }
  if (record.batch) known.batch = record.batch;
  if (record.end) known.end = record.end;
}
