import { hash } from 'node:crypto';
import type { RecordLocation } from '../journal/journal';
import type { TextSource } from '../journal/journalText';

/**
 * One run's answers as columns, a slot per answer in the order they were journaled (a trace answered twice in a run
 * has two; the later is the run's answer): the trace's row in the store, where the answer's record is in the journal,
 * the latency, and a digest of the text. The store keeps them and the index writes them, so Compare Runs finds two
 * runs' answers and whether they differ by a lookup, never reading the journal again; no text is kept once on disk.
 */
export interface RunAnswerColumns {
  n: number;
  /** The trace's row in the store's columns. */
  row: Int32Array;
  /** The answer record's offset in the journal (HELD: the text is in `held` until it is on disk) and length. */
  at: Float64Array;
  len: Uint32Array;
  /** The target's latency in ms (NaN: none). */
  ms: Float64Array;
  /** ANSWER_FLAG bits. */
  flags: Uint8Array;
  /**
   * The first 8 bytes of the text's SHA-256, two words per answer: equal texts, equal digests, and two texts that
   * differ share one by a chance of 2^-64 (Compare asks only whether two answers are the same).
   */
  digest: Uint32Array;
  held: Record<number, string>;
}

/** A run's answer columns under its run's id, as the store's image and its index hold them. */
export interface RunAnswersImage extends RunAnswerColumns {
  run: string;
}

export const ANSWER_FLAG = { err: 1, user: 2 } as const;
/** The place of a text not on disk yet. */
export const HELD = -2;
const WORDS = 2;

export class RunAnswers {
  private c: RunAnswerColumns;
  /** Answers applied before they were on disk, by trace row, until their place is known (settle). */
  private readonly pending = new Map<number, number>();

  constructor(columns?: RunAnswerColumns) {
    this.c = columns ?? emptyColumns(64);
  }

  get size(): number {
    return this.c.n;
  }

  /**
   * An answer to the trace at `row`: with its place when it is on disk (a replay), else its text held until then.
   * `rows`: the store's traces, as many answers as a run makes once each (room for more is made only past them).
   */
  add(row: number, text: string, at: RecordLocation | undefined, ms: number | undefined, flags: number, rows = 0): void {
    if (this.c.n === this.c.row.length) this.c = grown(this.c, rows);
    const c = this.c;
    const slot = c.n++;
    c.row[slot] = row;
    c.ms[slot] = ms ?? NaN;
    c.flags[slot] = flags;
    digestInto(text, c.digest, slot * WORDS);
    if (at) return this.setPlace(slot, at);
    c.at[slot] = HELD;
    c.len[slot] = 0;
    c.held[slot] = text;
    this.pending.set(row, slot);
  }

  /** The answer to the trace at `row` applied before it was written is on disk at `at`: its text is no longer kept. */
  settle(row: number, at: RecordLocation): boolean {
    const slot = this.pending.get(row);
    if (slot === undefined) return false;
    this.pending.delete(row);
    this.setPlace(slot, at);
    return true;
  }

  private setPlace(slot: number, at: RecordLocation): void {
    this.c.at[slot] = at.offset;
    this.c.len[slot] = at.length;
    delete this.c.held[slot];
  }

  /** The run's answer slot of each of the store's `rows` rows (-1: the run did not answer it): the latest wins. */
  slotsByRow(rows: number): Int32Array {
    const out = new Int32Array(rows).fill(-1);
    const { row, n } = this.c;
    for (let slot = 0; slot < n; slot++) if (row[slot]! < rows) out[row[slot]!] = slot;
    return out;
  }

  text(slot: number, source: TextSource): string {
    const c = this.c;
    return c.held[slot] ?? source.read(c.at[slot]!, c.len[slot]!, 'a');
  }

  latencyMs(slot: number): number | undefined {
    const ms = this.c.ms[slot]!;
    return Number.isNaN(ms) ? undefined : ms;
  }

  flags(slot: number): number {
    return this.c.flags[slot]!;
  }

  /** Whether this run's answer in `slot` and another's in `otherSlot` have the same text (by their digests). */
  sameText(slot: number, other: RunAnswers, otherSlot: number): boolean {
    const a = this.c.digest;
    const b = other.c.digest;
    for (let w = 0; w < WORDS; w++) if (a[slot * WORDS + w] !== b[otherSlot * WORDS + w]) return false;
    return true;
  }

  /** The columns trimmed to the answers there are (the index writes them). */
  columns(): RunAnswerColumns {
    const c = this.c;
    const n = c.n;
    return { n, row: c.row.subarray(0, n), at: c.at.subarray(0, n), len: c.len.subarray(0, n), ms: c.ms.subarray(0, n), flags: c.flags.subarray(0, n), digest: c.digest.subarray(0, n * WORDS), held: { ...c.held } };
  }
}

const BASE64 = new Uint8Array(128);
for (const [i, ch] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[ch.charCodeAt(0)] = i;

/**
 * The first WORDS words (little-endian) of the text's SHA-256 into `out` from `at`. Read from the digest in base64,
 * 24 characters for its first 18 bytes: a string costs a run less than a Buffer per answer (allocated, then read).
 */
function digestInto(text: string, out: Uint32Array, at: number): void {
  const b64 = hash('sha256', text, 'base64');
  let word = 0;
  for (let byte = 0, i = 0; byte < WORDS * 4; i += 4) {
    const bits = (BASE64[b64.charCodeAt(i)]! << 18) | (BASE64[b64.charCodeAt(i + 1)]! << 12) | (BASE64[b64.charCodeAt(i + 2)]! << 6) | BASE64[b64.charCodeAt(i + 3)]!;
    for (let shift = 16; shift >= 0 && byte < WORDS * 4; shift -= 8, byte++) {
      word |= ((bits >>> shift) & 0xff) << ((byte & 3) * 8);
      if ((byte & 3) === 3) {
        out[at + (byte >> 2)] = word >>> 0;
        word = 0;
      }
    }
  }
}

function emptyColumns(capacity: number): RunAnswerColumns {
  return {
    n: 0,
    row: new Int32Array(capacity),
    at: new Float64Array(capacity),
    len: new Uint32Array(capacity),
    ms: new Float64Array(capacity),
    flags: new Uint8Array(capacity),
    digest: new Uint32Array(capacity * WORDS),
    held: {},
  };
}

/**
 * Room for twice as many, or for one answer per trace when that is fewer: a run of 100,000 traces kept room for
 * 131,072 (600,000: 1,048,576, 18 MB more). Columns read from an index are views of its file: copied the first time
 * they grow.
 */
function grown(c: RunAnswerColumns, rows: number): RunAnswerColumns {
  const twice = Math.max(64, c.row.length * 2);
  // At least an eighth more: a store that learns its traces in step with their answers grows by one each time, and
  // a copy of every column per answer would make the run's answers quadratic.
  const next = emptyColumns(rows > c.n && rows < twice ? Math.min(twice, Math.max(rows, c.n + (c.n >> 3) + 1)) : twice);
  next.row.set(c.row.subarray(0, c.n));
  next.at.set(c.at.subarray(0, c.n));
  next.len.set(c.len.subarray(0, c.n));
  next.ms.set(c.ms.subarray(0, c.n));
  next.flags.set(c.flags.subarray(0, c.n));
  next.digest.set(c.digest.subarray(0, c.n * WORDS));
  return { ...next, n: c.n, held: c.held };
}
