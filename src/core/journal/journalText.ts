import { closeSync, openSync, readSync } from 'node:fs';

/** Where the store finds a text it does not hold: a record's line in the journal, and the field of it. */
export interface TextSource {
  read(offset: number, length: number, field: 'p' | 'a'): string;
  /** A text just written at `offset`: kept, so that what asks for it next (its submission) does not read it back. */
  remember(offset: number, field: 'p' | 'a', text: string): void;
  close(): void;
}

// Texts read last, kept: a view asks for the same rows again as it scrolls and redraws.
const CACHED = 512;
// A prompt read from the list's item lines brings the item lines after it (a run asks for prompts in list order):
// one pread and decode of a block instead of one per trace. At most this many bytes and lines, well inside the cache.
const AHEAD_BYTES = 64 * 1024;
const AHEAD_LINES = 256;
// How an item line begins (JSON.stringify writes `t` first); only such lines are read ahead.
const ITEM_HEAD = Buffer.from('{"t":"item",');
const NEWLINE = 0x0a;

/**
 * Reads a prompt or an answer back from its record's line in the journal. The journal is append-only and a line,
 * once written, never moves, so a place stays good for the life of the file. Synchronous: a read is one pread of
 * one line (a few kilobytes) from the page cache, and callers (a row's label, an export's line) want the text now.
 */
export class JournalText implements TextSource {
  private fd: number | undefined;
  /**
   * Two generations rather than one Map kept in order: evicting a Map's oldest entry (keys().next()) walks over the
   * holes earlier deletions left at its front, which cost a 20,000-trace run more CPU than the reads themselves.
   */
  private recent = new Map<number, string>();
  private older = new Map<number, string>();
  /** Where the last prompt not kept was read (none yet: a first read reads its line only). */
  private lastMiss = -Infinity;

  constructor(private readonly path: string) {}

  read(offset: number, length: number, field: 'p' | 'a'): string {
    const key = cacheKey(offset, field);
    const hit = this.recent.get(key) ?? this.older.get(key);
    if (hit !== undefined) {
      this.keep(key, hit);
      return hit;
    }
    // Ahead only when misses walk forward (a run's, a view scrolled down), not for a view's scattered rows.
    const ahead = field === 'p' && length < AHEAD_BYTES && offset > this.lastMiss && offset - this.lastMiss <= 4 * AHEAD_BYTES;
    if (field === 'p') this.lastMiss = offset;
    const block = this.readAt(offset, ahead ? AHEAD_BYTES : length);
    const text = block.length >= length ? textOf(block.toString('utf8', 0, length), field) : undefined;
    if (text === undefined) throw new Error(`The journal ${this.path} changed under Eval Runner (a record is no longer where it was written); reopen the evaluation.`);
    this.keep(key, text);
    if (ahead && block[length] === NEWLINE) this.keepItemsAhead(block, offset, length + 1);
    return text;
  }

  /** Up to `size` bytes of the file from `offset` (fewer at its end). */
  private readAt(offset: number, size: number): Buffer {
    this.fd ??= openSync(this.path, 'r');
    const block = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(this.fd, block, got, size - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return got === size ? block : block.subarray(0, got);
  }

  /**
   * The prompts of the whole item lines that follow in `block` (read from `offset`), kept: the next traces' reads
   * find them. Stops at the first line that is not an item or not whole; a line that does not parse is left to read().
   */
  private keepItemsAhead(block: Buffer, offset: number, from: number): void {
    for (let start = from, lines = 0; lines < AHEAD_LINES; lines++) {
      const end = block.indexOf(NEWLINE, start);
      if (end === -1 || end - start < ITEM_HEAD.length || block.compare(ITEM_HEAD, 0, ITEM_HEAD.length, start, start + ITEM_HEAD.length) !== 0) return;
      const key = cacheKey(offset + start, 'p');
      if (!this.recent.has(key) && !this.older.has(key)) {
        const text = textOf(block.toString('utf8', start, end), 'p');
        if (text === undefined) return;
        this.keep(key, text);
      }
      start = end + 1;
    }
  }

  remember(offset: number, field: 'p' | 'a', text: string): void {
    this.keep(cacheKey(offset, field), text);
  }

  /** The last CACHED texts read or written are kept, and up to as many before them. */
  private keep(key: number, text: string): void {
    this.recent.set(key, text);
    if (this.recent.size < CACHED) return;
    this.older = this.recent;
    this.recent = new Map();
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.recent.clear();
    this.older.clear();
  }
}

// A line holds at most one prompt and one answer: the offset and the field name the text.
function cacheKey(offset: number, field: 'p' | 'a'): number {
  return field === 'p' ? -offset - 1 : offset;
}

function textOf(line: string, field: 'p' | 'a'): string | undefined {
  try {
    const value = (JSON.parse(line) as Record<string, unknown>)[field];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
