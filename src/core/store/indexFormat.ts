// The index's format, shared by its reading (storeIndex.ts) and its writing (storeIndexWrite.ts, a file the extension
// loads only when it keeps an index): values and types only, so the writer pulls in nothing of the store.
import type { JournalPosition } from '../journal/journal';
import type { StoreImage, TraceColumns, NUMBER_COLUMNS } from './traceStore';

// The index's own format: another version's index is rebuilt from the journal, never misread. 6: verdicts by run;
// 7: each run's answers; 8: the columns placed from the header's end, an answer's digest of 8 bytes.
export const INDEX_VERSION = 8;
export const MAGIC = 'ERIX';

/** The store as of a place in its journal; the journal stays the truth, the index only saves reading it whole. */
export interface StoreIndex {
  position: JournalPosition;
  invalidLines: number;
  image: StoreImage;
}

export function indexPath(journalFile: string): string {
  return `${journalFile}.index`;
}

/**
 * The file: "ERIX", the version and the header's length (u32 LE each), a JSON header (everything but the numeric
 * columns: the runs, the trace ids, the few texts held, errors and notes), then each numeric column as raw
 * little-endian values at an 8-byte boundary, placed from the first boundary after the header: so the header is
 * written once, a piece at a time, not made again each time its length moved the columns (three copies of it, 18 MB
 * at 600,000 traces). Opening a 100,000-trace index parses a small JSON and maps the columns
 * as typed arrays, where a JSON index spent most of its time parsing numbers.
 */
export interface Header {
  key: string;
  position: JournalPosition;
  invalidLines: number;
  image: Omit<StoreImage, 'traces' | 'answers'>;
  n: number;
  ids: string[];
  runNames: string[];
  held: TraceColumns['held'];
  error: TraceColumns['error'];
  note: TraceColumns['note'];
  /** Column name → byte offset from the header's end (its 8-byte boundary); a nullable column with no value at all is left out. */
  columns: Record<string, number>;
  /** Each run's answers (see runAnswers.ts): its held texts in the header, its columns in the file like the traces'. */
  answers: Array<{ run: string; n: number; held: Record<number, string>; columns: Record<string, number> }>;
}

export type NumberColumn = (typeof NUMBER_COLUMNS)[number];
export const WIDTH: Record<NumberColumn, 1 | 2 | 4 | 8> = { state: 1, flags: 2, run: 4, pl: 4, al: 4, p: 8, a: 8, ms: 8, ft: 8, answeredAt: 8, submittedAt: 8, tp: 8, tc: 8 };
export const ANSWER_COLUMNS = ['row', 'at', 'len', 'ms', 'flags', 'digest'] as const;
export type AnswerColumn = (typeof ANSWER_COLUMNS)[number];

/** Where a column goes: the next 8-byte boundary. */
export const align = (at: number) => Math.ceil(at / 8) * 8;
