import { readFile } from 'node:fs/promises';
import type { PromptItem } from '../../api/schemas';
import { CHECKED, journalPath, openJournal, positionAt, readJournal } from '../journal/journal';
import type { Journal, JournalKey, JournalPosition, JournalReadResult, JournalVisitor } from '../journal/journal';
import { JournalText } from '../journal/journalText';
import type { JournalFs } from '../journal/storage';
import { readIndex } from '../store/storeIndex';
import type { StoreIndex } from '../store/storeIndex';
import type * as IndexWrite from '../store/storeIndexWrite';
import { TraceStore } from '../store/traceStore';

/** The journal under its lock for an action, the store it keeps current, and the evaluation it is of. */
export interface LockedJournal {
  journal: Journal;
  store: TraceStore;
  key: JournalKey;
}

/** Journals shorter than this are read whole (milliseconds); the index is kept only past it. */
export const INDEX_MIN_GROWTH = 1024 * 1024;

/** The key the index beside a journal is written for (one evaluation of one service). */
export function sessionId(key: JournalKey): string {
  return `${key.origin}|${key.kind}|${key.evaluationId}`;
}

/**
 * Keeps one evaluation's store in step with its journal: reads on from the last byte read, or the whole journal when
 * it is new or another file, opens it from the index beside it and keeps that index. The session says when: it owns
 * the journal's turns and its lock, and reads only through here.
 */
export class StoreSync {
  store = new TraceStore();
  /** Journal lines skipped at the last read: unreadable or not of a known shape (never acted on). */
  invalidLines = 0;
  tornTail = false;
  /** The other state folders read with this one (the shards of a run spread over machines). */
  alsoFrom: readonly string[] = [];
  /** Where the store's reading of the journal ended; undefined: the next read is a whole one. */
  private position: JournalPosition | undefined;
  /** Prompts a version before 0.2 kept beside the journal: read (never written) until the journal has its own. */
  private legacyPrompts: PromptItem[] | undefined;
  private legacyLooked = false;
  /** The store a whole read of the journal is building; it replaces `store` once the read ends. */
  private building: TraceStore | undefined;
  /** The journal's length when its index was last read or written (see storeIndex.ts). */
  private indexedAt = 0;

  constructor(
    private readonly key: JournalKey,
    readonly journalFile: string,
    /** false: keep nothing on disk (measuring the journal's own cost; no resume, no history). */
    private readonly journaled: boolean,
  ) {}

  /** The journals read as this evaluation: its own, then the other folders'. */
  get journalFiles(): string[] {
    return [this.journalFile, ...this.alsoFrom.map((dir) => journalPath(dir, this.key))];
  }

  /**
   * One read of the journal (and the other folders'): opened from the index when there is one, and the index kept.
   * `writer`: another process writes the journal (a run this window follows) and its end writes the index, so the read
   * leaves it alone; once that run `ended`, its fresh index is taken when it is ahead of the store.
   */
  async read(writer?: 'running' | 'ended'): Promise<void> {
    if (writer === 'ended') await this.takeIndexAhead();
    await this.openIndex();
    const replay = await this.readAll();
    await this.readLegacyPrompts();
    this.absorb(replay);
    if (!writer) await this.keepIndex();
  }

  /** Opens the journal under its lock (for an action), reading on from where the store's last read ended; absorb() next. */
  async open(fs: JournalFs | undefined): Promise<{ journal: Journal; replay: JournalReadResult }> {
    await this.openIndex();
    return openJournal(this.journalFile, { ...(fs ? { fs } : {}), ...(this.position ? { from: this.position } : {}), visit: this.visitor() });
  }

  /**
   * Before the first read: the store as the index beside the journal has it, and the position it was taken at, so the
   * read goes on from there. An index that no longer fits the journal (another file, cut short) makes that read a
   * whole one, which builds the store afresh; none at all, likewise.
   */
  private async openIndex(): Promise<void> {
    if (!this.journaled || this.position || this.alsoFrom.length) return;
    const index = await readIndex(this.journalFile, sessionId(this.key));
    if (!index || this.position) return;
    this.adopt(index);
  }

  /** The store as the index has it, read on from the index's place. */
  private adopt(index: StoreIndex): void {
    this.store.close();
    this.store = TraceStore.fromImage(index.image, new JournalText(this.journalFile));
    this.position = index.position;
    this.invalidLines = index.invalidLines;
    this.indexedAt = index.position.bytes;
  }

  /**
   * The index beside the journal, taken in place of the store when it is of a place at least INDEX_MIN_GROWTH further
   * on: a run in another process wrote it at its end, and opening it costs far less than reading the run's records.
   */
  private async takeIndexAhead(): Promise<void> {
    const position = this.position;
    if (!this.journaled || !position || this.alsoFrom.length) return;
    const index = await readIndex(this.journalFile, sessionId(this.key));
    if (!index) return;
    if (index.position.bytes >= position.bytes + INDEX_MIN_GROWTH) this.adopt(index);
    // Close behind the store: the index is current enough, and this store does not write it again.
    else this.indexedAt = Math.max(this.indexedAt, index.position.bytes);
  }

  /**
   * Writes the index again once the journal has grown past it by a quarter (at least 1 MB): a 100,000-trace journal is
   * opened by reading its index and what follows it; a store that reads another process's run through its journal
   * alone rewrites it a few dozen times over the run, not at every read (one that follows the run, never: see read).
   */
  async keepIndex(force = false): Promise<void> {
    const position = this.position;
    if (!this.journaled || !position || this.alsoFrom.length || !this.store.placed) return;
    const grown = position.bytes - this.indexedAt;
    // force (a run's end): any growth of a journal worth an index, so the first reader after the run reads nothing.
    if (grown <= 0 || position.bytes < INDEX_MIN_GROWTH) return;
    if (!force && (grown < INDEX_MIN_GROWTH || grown < this.indexedAt / 4)) return;
    this.indexedAt = position.bytes;
    await indexWrite().writeIndex(this.journalFile, sessionId(this.key), { position, invalidLines: this.invalidLines, image: this.store.image() });
  }

  /**
   * The journal was appended to under its lock: the file is what it was plus what `journal` wrote (unless a write
   * failed). A journal this action began (none before it) or one too short to follow is placed from the file itself,
   * so a run's end can index it (the first `status` after a new 100,000-trace run read it whole: 1–1.7 s).
   */
  async wrote(journal: Journal): Promise<void> {
    const was = this.position;
    if (journal.failure !== undefined) this.position = undefined;
    else if (was && was.bytes >= CHECKED) this.position = positionAfter(was, journal);
    else if (journal.bytesWritten > 0) this.position = await positionAt(this.journalFile, (was?.bytes ?? 0) + journal.bytesWritten);
  }

  /** The journal, and the other folders' after it: each shard's records are about its own traces. */
  private async readAll(): Promise<JournalReadResult> {
    if (this.alsoFrom.length === 0) return readJournal(this.journalFile, this.position, this.visitor());
    const [own, ...others] = this.journalFiles;
    const first = await readJournal(own!);
    const all = [first, ...(await Promise.all(others.map((file) => readJournal(file))))];
    return { records: all.flatMap((r) => r.records), tornTail: all.some((r) => r.tornTail), corruptLines: all.reduce((n, r) => n + r.corruptLines, 0) };
  }

  /** Prompts a version before 0.2 kept beside the journal, looked for once, while the journal has none of its own. */
  private async readLegacyPrompts(): Promise<void> {
    if (this.legacyLooked || this.alsoFrom.length || (this.building ?? this.store).promptsRecorded) return;
    this.legacyLooked = true;
    const side = this.journalFile.replace(/\.jsonl$/, '.prompts.json');
    this.legacyPrompts = await readFile(side, 'utf8').then((t) => JSON.parse(t) as PromptItem[], () => undefined);
  }

  /**
   * Where a read of the journal puts its records: the store, for a read that goes on from the last; a new store that
   * reads its texts back from the journal, for a whole read (absorb puts it in place once the read ends).
   */
  private visitor(): JournalVisitor {
    return (continued) => {
      if (continued) return (record, at) => this.store.apply(record, at);
      const store = new TraceStore().readFrom(new JournalText(this.journalFile));
      this.building?.close();
      this.building = store;
      return (record, at) => store.apply(record, at);
    };
  }

  /** A read of the journal into the store: what was appended since the last read, or the whole of it. */
  absorb(replay: JournalReadResult): void {
    this.tornTail = replay.tornTail;
    this.position = replay.position;
    const built = this.building;
    this.building = undefined;
    if (replay.continued) {
      this.invalidLines += replay.corruptLines;
      for (const record of replay.records) this.store.apply(record);
      return;
    }
    this.invalidLines = replay.corruptLines;
    // Read whole: an index there was is not of this store.
    this.indexedAt = 0;
    // Records read without places (the shards' other folders) make a store that holds its texts.
    const store = built && replay.records.length === 0 ? built : TraceStore.fromRecords(replay.records);
    if (!store.promptsRecorded && this.legacyPrompts) store.setListed(this.legacyPrompts);
    if (store !== this.store) this.store.close();
    this.store = store;
  }
}

/**
 * Where a position moves to once a journal appended under the lock (undefined: read whole next time, as for a file
 * too short for its first bytes to be known yet).
 */
function positionAfter(position: JournalPosition, journal: Journal): JournalPosition | undefined {
  if (journal.bytesWritten === 0) return position;
  if (position.bytes < CHECKED) return undefined;
  const before = Buffer.concat([Buffer.from(position.before, 'base64'), journal.lastWritten]).subarray(-CHECKED);
  return { ...position, bytes: position.bytes + journal.bytesWritten, before: before.toString('base64') };
}

/**
 * The index's writer, loaded when an index is first kept: in the extension a file of its own (dist/storeIndexWrite.js)
 * that activation does not read; the CLI and the runner bundle it.
 */
function indexWrite(): typeof IndexWrite {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../store/storeIndexWrite') as typeof IndexWrite;
}
