import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { EvaluationKind } from '../../api/kinds';
import { acquireLock, releaseLock } from './journalLock';
import { parseLine } from './journalRecords';
import type { JournalRecord } from './journalRecords';

import { NODE_FS, asStorageError } from './storage';
import type { JournalFileHandle, JournalFs } from './storage';

export interface JournalKey {
  origin: string;
  kind: EvaluationKind;
  evaluationId: number;
}

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

export const CHECKED = 64;

export interface Journal {
  readonly path: string | undefined;
  /** Resolves once the record is on disk (fsync'd). */
  append(record: JournalRecord): Promise<void>;
  /**
   * append, and where the record's line will be in the file (the order of appends is the file's order); a journal
   * that keeps nothing gives no place. The store keeps the place instead of the text once `durable` resolves.
   */
  place(record: JournalRecord): { durable: Promise<void>; at: RecordLocation | undefined };
  /** Records appended and not yet on disk. */
  readonly backlog: number;
  /** Bytes this journal wrote to its file (a reader that had the file up to where it opened goes on from there). */
  readonly bytesWritten: number;
  /** The last bytes it wrote (up to 64), for the position a reader keeps (JournalPosition.before). */
  readonly lastWritten: Buffer;
  /**
   * The first write that failed (a StorageError for a full or unwritable folder): every later append fails
   * with it too, so a run checks it before it reports success.
   */
  readonly failure: unknown;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const DSYNC: number | undefined = typeof constants.O_DSYNC === 'number' ? constants.O_DSYNC : undefined;

export function journalPath(stateDir: string, key: JournalKey): string {
  const readable = key.origin.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_');
  const hash = createHash('sha256').update(key.origin).digest('hex').slice(0, 8);
  return join(stateDir, `${readable}-${hash}`, `${key.kind}-${key.evaluationId}.jsonl`);
}

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

export interface OpenJournalOptions {
  /** Most records per fsync. */
  maxBatch?: number;
  /** Replay only what was appended after this position (a store kept open has the rest). */
  from?: JournalPosition;
  /** The file operations (Node's; tests put a fault-injecting layer here). */
  fs?: JournalFs;
  /** Each replayed record, with where its line is, instead of collecting them (see readJournal). */
  visit?: JournalVisitor;
}

/**
 * Opens a journal for appending, after cutting a torn tail. Group commit: a flush starts as soon as the
 * previous one ends, so records arriving meanwhile share one write + fsync (at most maxBatch of them); a
 * record waits at most one fsync plus a millisecond, well inside the 200 ms the design allows. Also takes a lock file so two runs never write the same journal.
 */
export async function openJournal(path: string, options: OpenJournalOptions = {}): Promise<{ journal: Journal; replay: JournalReadResult }> {
  const fs = options.fs ?? NODE_FS;
  const { handle, replay } = await openForAppend(fs, path, options.from, options.visit);
  // After a torn tail is cut, the file ends where the read did: the first record appended goes there.
  return { journal: new GroupCommitJournal(fs, path, handle, options.maxBatch ?? 512, replay.position?.bytes ?? 0), replay };
}

/** Locks the journal, replays it, cuts a torn tail and opens it for appending; the lock is released on failure. */
async function openForAppend(fs: JournalFs, path: string, from: JournalPosition | undefined, visit: JournalVisitor | undefined): Promise<{ handle: JournalFileHandle; replay: JournalReadResult }> {
  let locked = false;
  try {
    // Owner-only: the journal holds prompts and answers, which can be confidential.
    await fs.mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
    await acquireLock(fs, `${path}.lock`);
    locked = true;
    const replay = await readJournal(path, from, visit);
    // Appending after a torn line would glue the next record onto it: cut it first (after the last whole line).
    if (replay.tornTail && replay.position) await fs.truncate(path, replay.position.bytes);
    // With O_DSYNC a write returns once its bytes are on disk: one thread-pool job per batch instead of a write
    // and an fdatasync, each a round trip through a busy event loop (journal cost on a 20k run: 30 % → 12 %).
    // Where the platform has no O_DSYNC (Windows), each write is followed by an fdatasync as before.
    const handle = await fs.open(path, DSYNC === undefined ? 'a' : constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | DSYNC, 0o600);
    return { handle, replay };
  } catch (error) {
    if (locked) releaseLock(fs, `${path}.lock`);
    throw asStorageError(error, path);
  }
}

/**
 * Group commit: a flush starts as soon as the previous one ends, so records arriving meanwhile share one write +
 * fsync (at most maxBatch of them). The first failure (a full disk) is kept: every later append fails with it.
 */
class GroupCommitJournal implements Journal {
  private queue: Array<{ line: string; resolve: () => void; reject: (e: unknown) => void }> = [];
  private writing = 0;
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Immediate | undefined;
  private firstFailure: Error | undefined;
  private written = 0;
  private tail = Buffer.alloc(0);

  constructor(
    private readonly fs: JournalFs,
    readonly path: string,
    private readonly handle: JournalFileHandle,
    private readonly maxBatch: number,
    /** Where the next record goes: the file's length, and the lines queued since. */
    private nextOffset: number,
  ) {}

  get backlog(): number {
    return this.queue.length + this.writing;
  }

  get bytesWritten(): number {
    return this.written;
  }

  get lastWritten(): Buffer {
    return this.tail;
  }

  get failure(): Error | undefined {
    return this.firstFailure;
  }

  append(record: JournalRecord): Promise<void> {
    return this.place(record).durable;
  }

  place(record: JournalRecord): { durable: Promise<void>; at: RecordLocation } {
    const line = `${JSON.stringify(record)}\n`;
    const length = Buffer.byteLength(line) - 1;
    const at = { offset: this.nextOffset, length };
    // A failed journal writes nothing more: nothing is placed after its failure either.
    if (!this.firstFailure) this.nextOffset += length + 1;
    const durable = new Promise<void>((resolve, reject) => {
      this.queue.push({ line, resolve, reject });
      // Records of the same turn of the event loop share a flush; a busy flusher picks them up when it ends.
      if (this.queue.length >= this.maxBatch) this.kick();
      else this.timer ??= setImmediate(() => this.kick());
    });
    return { durable, at };
  }

  async flush(): Promise<void> {
    this.kick();
    while (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    await this.flush();
    // Closing and unlocking free space rather than take it: they go ahead on a full disk too.
    await this.handle.close().catch(() => undefined);
    releaseLock(this.fs, `${this.path}.lock`);
  }

  private kick(): void {
    if (this.timer) {
      clearImmediate(this.timer);
      this.timer = undefined;
    }
    if (!this.flushing) {
      this.flushing = this.flushLoop().finally(() => {
        this.flushing = undefined;
        if (this.queue.length > 0) this.kick();
      });
    }
  }

  private async flushLoop(): Promise<void> {
    const { maxBatch } = this;
    while (this.queue.length > 0) {
      const batch = this.queue.length <= maxBatch ? this.queue : this.queue.slice(0, maxBatch);
      this.queue = this.queue.length <= maxBatch ? [] : this.queue.slice(maxBatch);
      this.writing = batch.length;
      try {
        if (this.firstFailure) throw this.firstFailure;
        const text = batch.map((b) => b.line).join('');
        await this.handle.write(text);
        const bytes = Buffer.from(text);
        this.written += bytes.length;
        this.tail = Buffer.concat([this.tail, bytes.subarray(Math.max(0, bytes.length - CHECKED))]).subarray(-CHECKED);
        if (DSYNC === undefined) await this.handle.datasync();
        for (const b of batch) b.resolve();
      } catch (error) {
        this.firstFailure ??= asStorageError(error, this.path);
        for (const b of batch) b.reject(this.firstFailure);
      }
      this.writing = 0;
    }
  }
}

/** A journal that keeps nothing: for benchmarking the journal's own cost. */
export function nullJournal(): Journal {
  return {
    path: undefined,
    backlog: 0,
    bytesWritten: 0,
    lastWritten: Buffer.alloc(0),
    failure: undefined,
    append: () => Promise.resolve(),
    place: () => ({ durable: Promise.resolve(), at: undefined }),
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

export { JournalLockedError } from './journalLock';
