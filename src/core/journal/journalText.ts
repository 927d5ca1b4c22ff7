import { closeSync, openSync, readSync } from 'node:fs';

/** Where the store finds a text it does not hold: a record's line in the journal, and the field of it. */
export interface TextSource {
  read(offset: number, length: number, field: 'p' | 'a'): string;
  close(): void;
}

// Texts read last, kept (of each field): a view asks for the same rows again as it scrolls and redraws.
const CACHED = 512;
// A prompt read from the list's item lines brings the item lines after it (a run asks for prompts in list order):
// one pread and decode of a block instead of one per trace. At most this many bytes and lines, well inside the cache.
const AHEAD_BYTES = 64 * 1024;
const AHEAD_LINES = 256;
// How an item line begins (JSON.stringify writes `t` first); only such lines are read ahead.
const ITEM_HEAD = Buffer.from('{"t":"item",');
// Where an item line's prompt begins and what follows it (`{"t":"item","id":…,"p":"…","at":N}`): a quote inside a
// string is escaped, so neither can be met inside the id or the prompt.
const PROMPT_KEY = Buffer.from(',"p":');
const AT_KEY = Buffer.from(',"at":');
const NEWLINE = 0x0a;
const CLOSE_BRACE = 0x7d;

/**
 * Texts by their line's offset: the last CACHED kept, and up to as many before them. Two generations rather than one
 * Map kept in order: evicting a Map's oldest entry (keys().next()) walks over the holes earlier deletions left at its
 * front, which cost a 20,000-trace run more CPU than the reads themselves.
 */
class KeptTexts {
  private recent = new Map<number, string>();
  private older = new Map<number, string>();

  get(offset: number): string | undefined {
    return this.recent.get(offset) ?? this.older.get(offset);
  }

  has(offset: number): boolean {
    return this.recent.has(offset) || this.older.has(offset);
  }

  keep(offset: number, text: string): void {
    this.recent.set(offset, text);
    if (this.recent.size < CACHED) return;
    this.older = this.recent;
    this.recent = new Map();
  }

  clear(): void {
    this.recent.clear();
    this.older.clear();
  }
}

/**
 * Reads a prompt or an answer back from its record's line in the journal. The journal is append-only and a line,
 * once written, never moves, so a place stays good for the life of the file. Synchronous: a read is one pread of
 * one line (a few kilobytes) from the page cache, and callers (a row's label, an export's line) want the text now.
 */
export class JournalText implements TextSource {
  private fd: number | undefined;
  /** Prompts and answers kept apart: a run reads prompts ahead, 256 at a time, and would push out a view's answers. */
  private readonly kept = { p: new KeptTexts(), a: new KeptTexts() };
  /** Where the last prompt not kept was read (none yet: a first read reads its line only). */
  private lastMiss = -Infinity;

  constructor(private readonly path: string) {}

  read(offset: number, length: number, field: 'p' | 'a'): string {
    const kept = this.kept[field];
    const hit = kept.get(offset);
    if (hit !== undefined) {
      kept.keep(offset, hit);
      return hit;
    }
    // Ahead only when misses walk forward (a run's, a view scrolled down), not for a view's scattered rows.
    const ahead = field === 'p' && length < AHEAD_BYTES && offset > this.lastMiss && offset - this.lastMiss <= 4 * AHEAD_BYTES;
    if (field === 'p') this.lastMiss = offset;
    const block = this.readAt(offset, ahead ? AHEAD_BYTES : length);
    const text = block.length >= length ? textOf(block.toString('utf8', 0, length), field) : undefined;
    if (text === undefined) throw new Error(`The journal ${this.path} changed under Eval Runner (a record is no longer where it was written); reopen the evaluation.`);
    kept.keep(offset, text);
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
    const kept = this.kept.p;
    for (let start = from, lines = 0; lines < AHEAD_LINES; lines++) {
      const end = block.indexOf(NEWLINE, start);
      if (end === -1 || end - start < ITEM_HEAD.length || block.compare(ITEM_HEAD, 0, ITEM_HEAD.length, start, start + ITEM_HEAD.length) !== 0) return;
      if (!kept.has(offset + start)) {
        const text = itemPrompt(block, start, end) ?? textOf(block.toString('utf8', start, end), 'p');
        if (text === undefined) return;
        kept.keep(offset + start, text);
      }
      start = end + 1;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.kept.p.clear();
    this.kept.a.clear();
  }
}

/**
 * The prompt of the item line at block[start, end), parsing its string alone (not the record's object, id and all):
 * read ahead, a run decodes every prompt of the list once more. Undefined for a line of any other shape.
 */
export function itemPrompt(block: Buffer, start: number, end: number): string | undefined {
  const from = block.indexOf(PROMPT_KEY, start);
  const to = block.lastIndexOf(AT_KEY, end);
  if (from === -1 || to === -1 || from > to || block[end - 1] !== CLOSE_BRACE) return undefined;
  for (let i = to + AT_KEY.length; i < end - 1; i++) if (block[i]! < 0x30 || block[i]! > 0x39) return undefined;
  try {
    const value: unknown = JSON.parse(block.toString('utf8', from + PROMPT_KEY.length, to));
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

function textOf(line: string, field: 'p' | 'a'): string | undefined {
  try {
    const value = (JSON.parse(line) as Record<string, unknown>)[field];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
