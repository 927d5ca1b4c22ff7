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

  constructor(private readonly path: string) {}

  read(offset: number, length: number, field: 'p' | 'a'): string {
    const key = cacheKey(offset, field);
    const hit = this.recent.get(key) ?? this.older.get(key);
    if (hit !== undefined) {
      this.keep(key, hit);
      return hit;
    }
    this.fd ??= openSync(this.path, 'r');
    const line = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, line, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    const text = got === length ? textOf(line.toString('utf8'), field) : undefined;
    if (text === undefined) throw new Error(`The journal ${this.path} changed under Eval Runner (a record is no longer where it was written); reopen the evaluation.`);
    this.keep(key, text);
    return text;
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
