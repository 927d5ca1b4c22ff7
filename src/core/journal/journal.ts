import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { join } from 'node:path';
import type { EvaluationKind } from '../../api/evaluationKinds';
import { acquireLock, releaseLock } from './journalLock';
import type { JournalRecord } from './journalRecords';
import { CHECKED, readJournal } from './journalRead';
import type { JournalPosition, JournalReadResult, JournalVisitor, RecordLocation } from './journalRead';
import { NODE_FS, asStorageError } from './storage';
import type { JournalFileHandle, JournalFs } from './storage';

// Reading a journal is journalRead.ts; its names stay reachable from here, the journal's one door.
export { CHECKED, parseJournal, positionAt, readJournal, readJournalLines } from './journalRead';
export type { JournalPosition, JournalReadResult, JournalVisitor, LineVisitor, RecordLocation, RecordVisitor } from './journalRead';

export interface JournalKey {
  origin: string;
  kind: EvaluationKind;
  evaluationId: number;
}

export interface Journal {
  readonly path: string | undefined;
  /** Resolves once the record is on disk (fsync'd). */
  append(record: JournalRecord): Promise<void>;
  /**
   * append, and where the record's line will be in the file (the order of appends is the file's order); a journal
   * that keeps nothing gives no place. `onDisk` is called with the place once the line is on disk, just before
   * `durable` resolves (the store keeps the place instead of the text then: no second promise per answer).
   */
  place(record: JournalRecord, onDisk?: (at: RecordLocation) => void): { durable: Promise<void>; at: RecordLocation | undefined };
  /**
   * place for several records at once: their lines go in one write, in order, and one promise says they are on disk
   * (a list of 600,000 prompts costs one promise per batch, not one per prompt). A journal that keeps nothing gives
   * no places.
   */
  placeAll(records: readonly JournalRecord[]): { durable: Promise<void>; at: BatchPlaces | undefined };
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

/**
 * Where each line of a batch is, in the batch's order: its offset and its length in bytes, as RecordLocation gives them.
 * Columns, not an object per line: a 20,000-prompt list made 20,000 of them, each read once by the store.
 */
export interface BatchPlaces {
  offsets: Float64Array;
  lengths: Uint32Array;
}

/**
 * Lines queued for one write (at most maxBatch), and the one promise that says they are on disk: a promise per record
 * (two per trace, its answer's and its submission's) cost a 20,000-trace run more than the batch's write (issue 36).
 * `told`: the records' places, each after its listener, told once the write is done.
 */
interface Batch {
  lines: string[];
  bytes: number;
  told: Array<((at: RecordLocation) => void) | RecordLocation>;
  durable: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

const DSYNC: number | undefined = typeof constants.O_DSYNC === 'number' ? constants.O_DSYNC : undefined;

export function journalPath(stateDir: string, key: JournalKey): string {
  const readable = key.origin.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_');
  const hash = createHash('sha256').update(key.origin).digest('hex').slice(0, 8);
  return join(stateDir, `${readable}-${hash}`, `${key.kind}-${key.evaluationId}.jsonl`);
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
  /** Batches to write, the last one open to more lines; each line one or more without its last newline. */
  private queue: Batch[] = [];
  /** Lines queued and not yet being written. */
  private queued = 0;
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
    return this.queued + this.writing;
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

  place(record: JournalRecord, onDisk?: (at: RecordLocation) => void): { durable: Promise<void>; at: RecordLocation } {
    // No newline appended here: a rope per record that the length and then the flush would flatten again.
    const line = JSON.stringify(record);
    const length = Buffer.byteLength(line);
    const at = { offset: this.nextOffset, length };
    // A failed journal writes nothing more: nothing is placed after its failure either.
    if (!this.firstFailure) this.nextOffset += length + 1;
    return { durable: this.enqueue(line, length + 1, onDisk, at), at };
  }

  placeAll(records: readonly JournalRecord[]): { durable: Promise<void>; at: BatchPlaces } {
    const at = { offsets: new Float64Array(records.length), lengths: new Uint32Array(records.length) };
    // Nothing to queue (an empty line would be written): as a write would, it fails once the journal has.
    if (records.length === 0) return { durable: this.firstFailure ? Promise.reject(this.firstFailure) : Promise.resolve(), at };
    const lines: string[] = new Array<string>(records.length);
    for (let i = 0; i < records.length; i++) lines[i] = lineOf(records[i]!);
    const text = lines.join('\n');
    // Lines of one-byte characters only (most lists), as the whole text's UTF-8 length says: each line's length in bytes
    // is its length, and one count serves the batch instead of one per line (20,000 of them in a 20,000-prompt list).
    const bytes = Buffer.byteLength(text) + 1;
    const ascii = bytes === text.length + 1;
    let offset = this.nextOffset;
    for (let i = 0; i < lines.length; i++) {
      const length = ascii ? lines[i]!.length : Buffer.byteLength(lines[i]!);
      at.offsets[i] = offset;
      at.lengths[i] = length;
      offset += length + 1;
    }
    if (!this.firstFailure) this.nextOffset = offset;
    return { durable: this.enqueue(text, bytes, undefined, undefined), at };
  }

  /**
   * Queues lines (`bytes` long in UTF-8 with their newlines) for the next flush; resolves once they are on disk, after
   * telling `onDisk` the place `at`.
   */
  private enqueue(line: string, bytes: number, onDisk: ((at: RecordLocation) => void) | undefined, at: RecordLocation | undefined): Promise<void> {
    let batch = this.queue[this.queue.length - 1];
    if (!batch || batch.lines.length >= this.maxBatch) this.queue.push((batch = newBatch()));
    batch.lines.push(line);
    batch.bytes += bytes;
    if (onDisk) batch.told.push(onDisk, at!);
    this.queued++;
    // Records of the same turn of the event loop share a flush; a busy flusher picks them up when it ends.
    if (this.queued >= this.maxBatch) this.kick();
    else this.timer ??= setImmediate(() => this.kick());
    return batch.durable;
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
    for (let batch = this.queue.shift(); batch; batch = this.queue.shift()) {
      this.queued -= batch.lines.length;
      this.writing = batch.lines.length;
      try {
        if (this.firstFailure) throw this.firstFailure;
        const text = `${batch.lines.join('\n')}\n`;
        await this.handle.write(text);
        this.written += batch.bytes;
        // The last bytes from the last characters (CHECKED of them are at least CHECKED bytes; one more in case the
        // first is half a surrogate pair): the batch is not encoded twice, 8 MB of buffers in a 20,000-trace run.
        this.tail = Buffer.concat([this.tail, Buffer.from(text.slice(-CHECKED - 1))]).subarray(-CHECKED);
        if (DSYNC === undefined) await this.handle.datasync();
      } catch (error) {
        this.firstFailure ??= asStorageError(error, this.path);
        batch.reject(this.firstFailure);
        this.writing = 0;
        continue;
      }
      // Outside the write's try: a listener that throws is not the disk's failure (its lines are on disk); the store
      // then keeps that record's text held, as before it was told.
      const told = batch.told;
      for (let i = 0; i < told.length; i += 2) tellOnDisk(told[i] as (at: RecordLocation) => void, told[i + 1] as RecordLocation);
      batch.resolve();
      this.writing = 0;
    }
  }
}

/** An empty batch, its promise waiting for the write. */
function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const durable = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { lines: [], bytes: 0, told: [], durable, resolve, reject };
}

function tellOnDisk(onDisk: (at: RecordLocation) => void, at: RecordLocation): void {
  try {
    onDisk(at);
  } catch {
    // the record is on disk all the same
  }
}

/**
 * A record's line, as JSON.stringify writes it. A list item's, the one record written per prompt of a list, is put
 * together from its two strings: half the CPU of stringifying the object, the same bytes (its four keys in this order,
 * as ListWriter makes it, and an integer time).
 */
function lineOf(record: JournalRecord): string {
  if (record.t !== 'item' || !Number.isSafeInteger(record.at)) return JSON.stringify(record);
  return `{"t":"item","id":${JSON.stringify(record.id)},"p":${JSON.stringify(record.p)},"at":${record.at}}`;
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
    placeAll: () => ({ durable: Promise.resolve(), at: undefined }),
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

export { JournalLockedError } from './journalLock';
