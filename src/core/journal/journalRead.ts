import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { parseLine } from './journalRecords';
import type { JournalRecord } from './journalRecords';

export interface JournalReadResult {
  records: JournalRecord[];
  /** A last line cut short by a crash: dropped and reported, never fatal. */
  tornTail: boolean;
  /** Lines elsewhere that are not JSON or not a record of a known shape: skipped, never acted on. */
  corruptLines: number;
  /** Where the read ended, after the last whole line: a later read goes on from there (readJournal's `from`). */
  position?: JournalPosition;
  /** The records continue an earlier read (from its position), rather than start the file. */
  continued?: boolean;
}

/**
 * A place in one journal file: the file itself and a byte offset. A journal deleted and begun again is another file
 * even where the system gives it the same inode: its first bytes and the bytes before the offset must match too.
 */
export interface JournalPosition {
  dev: number;
  ino: number;
  bytes: number;
  /** The file's first bytes and the bytes just before `bytes` (up to 64 each), as read. */
  head: string;
  before: string;
}

/** Bytes of a journal's start, and before a position, compared to tell the same file from one begun again. */
export const CHECKED = 64;

/** Where one record's line is in its journal file: its first byte and its length in bytes (newline excluded). */
export interface RecordLocation {
  offset: number;
  length: number;
}

/** Told each whole record as it is read, with where its line is (the store keeps that, not the text). */
export type RecordVisitor = (record: JournalRecord, at: RecordLocation) => void;
/** The visitor for one read, once it is known whether the read goes on from `from` or starts the file again. */
export type JournalVisitor = (continued: boolean) => RecordVisitor;

// A journal is read in chunks of this size: a 1 GB journal never becomes one string (V8's limit is 512 MB).
const READ_CHUNK = 4 * 1024 * 1024;

/**
 * Reads a journal; with `from` (where an earlier read of the same file ended) only what was appended since, so a
 * store kept open reads on from its last byte instead of replaying 100,000 records for every action. A file that is
 * not the one `from` names (deleted and begun again), or shorter, is read whole. With `visit`, each record goes to
 * it as it is read (with where its line is) and `records` stays empty: nothing but one chunk is held at a time.
 */
export async function readJournal(path: string, from?: JournalPosition, visit?: JournalVisitor): Promise<JournalReadResult> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      visit?.(false);
      return { records: [], tornTail: false, corruptLines: 0 };
    }
    throw error;
  }
  try {
    const { dev, ino, size } = await file.stat();
    const continued = from !== undefined && from.dev === dev && from.ino === ino && from.bytes <= size && (await sameFile(file, from));
    const start = continued ? from.bytes : 0;
    const records: JournalRecord[] = [];
    const scan = await scanLines(file, start, size, visit ? visit(continued) : (record) => records.push(record));
    const end = scan.end;
    const position = { dev, ino, bytes: end, head: await slice(file, 0, Math.min(CHECKED, end)), before: await slice(file, Math.max(0, end - CHECKED), end) };
    return { records, corruptLines: scan.corruptLines, tornTail: scan.tornTail, position, ...(continued ? { continued: true } : {}) };
  } finally {
    await file.close();
  }
}

/** Told each whole line's bytes (`bytes` from `from` to `to`, valid only during the call) and where it is. */
export type LineVisitor = (bytes: Buffer, from: number, to: number, at: RecordLocation) => void;

/**
 * The whole lines from `start` to `size`, chunk by chunk: each parsed and visited with its place. Only whole lines are
 * taken: a line being written (or cut short by a crash) is read again next time. `end`: after the last whole line.
 */
async function scanLines(file: FileHandle, start: number, size: number, visit: RecordVisitor): Promise<{ end: number; corruptLines: number; tornTail: boolean }> {
  let corruptLines = 0;
  const scan = await scanRawLines(file, start, size, (bytes, from, to, at) => {
    const record = parseLine(bytes.toString('utf8', from, to));
    if (record) visit(record, at);
    else corruptLines++;
  });
  return { ...scan, corruptLines };
}

/**
 * The whole lines from `start` to `size` as bytes, chunk by chunk, none decoded: the visitor decides what to read.
 * One buffer is read into again and again, the start of a line begun in the previous chunk moved to its front (a
 * new buffer per chunk cost a 600 MB journal's worth of copies and collections); it grows for a longer line.
 */
async function scanRawLines(file: FileHandle, start: number, size: number, visit: LineVisitor): Promise<{ end: number; tornTail: boolean }> {
  let buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(1, size - start)));
  // How many bytes at the buffer's front are a line begun in the previous chunk, and where that line starts.
  let held = 0;
  let lineStart = start;
  let pos = start;
  while (pos < size) {
    if (held === buffer.length) {
      const bigger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(bigger, 0, 0, held);
      buffer = bigger;
    }
    const { bytesRead } = await file.read(buffer, held, Math.min(buffer.length - held, size - pos), pos);
    if (bytesRead === 0) break;
    const bytes = buffer.subarray(0, held + bytesRead);
    const base = lineStart;
    let from = 0;
    for (let nl = bytes.indexOf(0x0a, from); nl !== -1; nl = bytes.indexOf(0x0a, from)) {
      if (nl > from) visit(bytes, from, nl, { offset: base + from, length: nl - from });
      from = nl + 1;
    }
    held = bytes.copy(buffer, 0, from);
    lineStart = base + from;
    pos += bytesRead;
  }
  return { end: lineStart, tornTail: held > 0 };
}

/** Every whole line of a journal as bytes, undecoded (a reader that wants a few fields of some records). */
export async function readJournalLines(path: string, visit: LineVisitor): Promise<void> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await scanRawLines(file, 0, (await file.stat()).size, visit);
  } finally {
    await file.close();
  }
}

/** Whether the open file is the one a position was taken in: the same first bytes, the same bytes before it. */
/**
 * Where a reader that had the file up to `bytes` stands: for a journal its writer began (no read of it to say), so
 * the index can be written when its run ends. Undefined when the file is not there or shorter.
 */
export async function positionAt(path: string, bytes: number): Promise<JournalPosition | undefined> {
  const file = await open(path, 'r').catch(() => undefined);
  if (!file) return undefined;
  try {
    const { dev, ino, size } = await file.stat();
    if (size < bytes) return undefined;
    return { dev, ino, bytes, head: await slice(file, 0, Math.min(CHECKED, bytes)), before: await slice(file, Math.max(0, bytes - CHECKED), bytes) };
  } finally {
    await file.close();
  }
}

async function sameFile(file: FileHandle, from: JournalPosition): Promise<boolean> {
  return (await slice(file, 0, Math.min(CHECKED, from.bytes))) === from.head && (await slice(file, Math.max(0, from.bytes - CHECKED), from.bytes)) === from.before;
}

async function slice(file: FileHandle, start: number, end: number): Promise<string> {
  const bytes = Buffer.alloc(end - start);
  const { bytesRead } = await file.read(bytes, 0, bytes.length, start);
  return bytes.subarray(0, bytesRead).toString('base64');
}

/** A journal's text as records (tests, and small files read whole). */
export function parseJournal(text: string): JournalReadResult {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const records: JournalRecord[] = [];
  let corruptLines = 0;
  for (const line of lines) {
    if (!line) continue;
    const record = parseLine(line);
    if (record) records.push(record);
    else corruptLines++;
  }
  // Text after the last newline is a record whose write was cut short.
  return { records, tornTail: last.length > 0, corruptLines };
}
