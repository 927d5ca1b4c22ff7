import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { JournalPosition } from '../journal/journal';
import { jsonPieces } from './jsonPieces';
import { ANSWER_FLAG, HELD } from './runAnswers';
import type { RunAnswersImage } from './runAnswers';
import { LOCAL_STATES, NUMBER_COLUMNS, newColumns } from './traceStore';
import type { StoreImage, TraceColumns } from './traceStore';

// The index's own format: another version's index is rebuilt from the journal, never misread. 6: verdicts by run;
// 7: each run's answers; 8: the columns placed from the header's end, an answer's digest of 8 bytes.
export const INDEX_VERSION = 8;
const VERSION = INDEX_VERSION;
const MAGIC = 'ERIX';

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
interface Header {
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

type NumberColumn = (typeof NUMBER_COLUMNS)[number];
const WIDTH: Record<NumberColumn, 1 | 2 | 4 | 8> = { state: 1, flags: 2, run: 4, pl: 4, al: 4, p: 8, a: 8, ms: 8, ft: 8, answeredAt: 8, submittedAt: 8, tp: 8, tc: 8 };
const NULLABLE = new Set<NumberColumn>(['ms', 'ft', 'answeredAt', 'submittedAt', 'tp', 'tc']);

/**
 * The index beside a journal, or undefined when there is none or it cannot be used (another version, another
 * evaluation, cut short, not ours): the caller then reads the journal whole and writes a new one. Whether the index
 * still fits the journal (the same file, not cut shorter) is for the journal's read from its position to say.
 */
export async function readIndex(journalFile: string, key: string): Promise<StoreIndex | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(indexPath(journalFile));
  } catch {
    return undefined;
  }
  try {
    return decode(bytes, key);
  } catch {
    return undefined;
  }
}

function decode(bytes: Buffer, key: string): StoreIndex | undefined {
  if (endianness() !== 'LE' || bytes.length < 12 || bytes.toString('latin1', 0, 4) !== MAGIC || bytes.readUInt32LE(4) !== VERSION) return undefined;
  const headerEnd = 12 + bytes.readUInt32LE(8);
  if (headerEnd > bytes.length) return undefined;
  const h = JSON.parse(bytes.toString('utf8', 12, headerEnd)) as Header;
  const base = align(headerEnd);
  if (h.key !== key || !isPosition(h.position) || typeof h.invalidLines !== 'number' || !Array.isArray(h.ids) || h.ids.length !== h.n) return undefined;
  const columns = newColumns(0);
  columns.id = h.ids;
  columns.runNames = h.runNames;
  columns.held = h.held;
  columns.error = h.error;
  columns.note = h.note;
  for (const name of Object.keys(WIDTH) as NumberColumn[]) {
    const at = placed(h.columns?.[name], base);
    if (at === undefined && NULLABLE.has(name)) {
      (columns as unknown as Record<string, undefined>)[name] = undefined;
      continue;
    }
    if (typeof at !== 'number' || at % 8 !== 0 || at + h.n * WIDTH[name] > bytes.length) return undefined;
    columns[name] = view(bytes, name, at, h.n) as never;
  }
  const answers = decodeAnswers(bytes, h, base);
  if (!answers) return undefined;
  const image: StoreImage = { ...h.image, traces: columns, answers };
  return isImage(image) ? { position: h.position, invalidLines: h.invalidLines, image } : undefined;
}

const ANSWER_COLUMNS = ['row', 'at', 'len', 'ms', 'flags', 'digest'] as const;
type AnswerColumn = (typeof ANSWER_COLUMNS)[number];
/** Bytes per answer, and the typed array each column is. */
const ANSWER_WIDTH: Record<AnswerColumn, number> = { row: 4, at: 8, len: 4, ms: 8, flags: 1, digest: 8 };
const ANSWER_ARRAY = { row: Int32Array, at: Float64Array, len: Uint32Array, ms: Float64Array, flags: Uint8Array, digest: Uint32Array };

/** Each run's answers, checked answer by answer (a row the store has, a place or a held text); undefined: not ours. */
function decodeAnswers(bytes: Buffer, h: Header, base: number): RunAnswersImage[] | undefined {
  if (!Array.isArray(h.answers)) return undefined;
  const out: RunAnswersImage[] = [];
  for (const a of h.answers) {
    if (!a || typeof a.run !== 'string' || !Number.isInteger(a.n) || a.n < 0 || !isTextMap(a.held)) return undefined;
    const image = { run: a.run, n: a.n, held: { ...a.held } } as RunAnswersImage;
    for (const name of ANSWER_COLUMNS) {
      const at = placed(a.columns?.[name], base);
      const length = a.n * ANSWER_WIDTH[name];
      if (typeof at !== 'number' || at % 8 !== 0 || at + length > bytes.length) return undefined;
      const Typed = ANSWER_ARRAY[name];
      const from = bytes.byteOffset + at;
      // Aligned for its type, a view of the file's bytes; else a copy.
      const aligned = from % Typed.BYTES_PER_ELEMENT === 0;
      const source = (aligned ? bytes.buffer : bytes.buffer.slice(from, from + length)) as ArrayBuffer;
      (image as unknown as Record<string, unknown>)[name] = new Typed(source, aligned ? from : 0, length / Typed.BYTES_PER_ELEMENT);
    }
    for (let i = 0; i < a.n; i++) {
      const place = image.at[i]!;
      const placed = Number.isInteger(place) && (place >= 0 || (place === HELD && typeof image.held[i] === 'string'));
      if (image.row[i]! < 0 || image.row[i]! >= h.n || !placed || image.flags[i]! > (ANSWER_FLAG.err | ANSWER_FLAG.user)) return undefined;
    }
    out.push(image);
  }
  return out;
}

/** A column's offset in the file from its offset in the header (undefined: absent; NaN: not an offset). */
function placed(offset: unknown, base: number): number | undefined {
  if (offset === undefined) return undefined;
  return typeof offset === 'number' && Number.isInteger(offset) && offset >= 0 ? base + offset : NaN;
}

/** A column over the file's bytes where they are aligned for it, else a copy. */
function view(bytes: Buffer, name: NumberColumn, at: number, n: number): ArrayLike<number> {
  const width = WIDTH[name];
  const from = bytes.byteOffset + at;
  const source = from % width === 0 ? bytes.buffer : bytes.buffer.slice(from, from + n * width);
  const offset = from % width === 0 ? from : 0;
  switch (name) {
    case 'state':
      return new Uint8Array(source, offset, n);
    case 'flags':
      return new Uint16Array(source, offset, n);
    case 'run':
      return new Int32Array(source, offset, n);
    case 'pl':
    case 'al':
      return new Uint32Array(source, offset, n);
    default:
      return new Float64Array(source, offset, n);
  }
}

/** Writes the index whole, aside then renamed into place (a crash leaves the old one or none); owner-only. */
export async function writeIndex(journalFile: string, key: string, index: StoreIndex): Promise<void> {
  const path = indexPath(journalFile);
  const aside = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    // The columns are written as the machine holds them: a big-endian one (none Node runs on today) keeps no index.
    if (endianness() !== 'LE') return;
    const file = await open(aside, 'w', 0o600);
    try {
      await encode(new FileOut(file), key, index);
    } finally {
      await file.close();
    }
    await rename(aside, path);
  } catch {
    // An index is only a shortcut: without it the next open reads the journal whole.
    await rm(aside, { force: true }).catch(() => undefined);
  }
}

/**
 * The header a piece at a time, then the columns as they are (one buffer of them all was a second copy of the index,
 * 12 MB at 100,000 traces; the header made whole, 18 MB at 600,000), then the header's length at the front.
 */
async function encode(out: FileOut, key: string, index: StoreIndex): Promise<void> {
  const { traces: c, answers, ...rest } = index.image;
  const n = c.id.length;
  const present = (Object.keys(WIDTH) as NumberColumn[]).filter((name) => c[name] !== undefined);
  const header: Header = { key, position: index.position, invalidLines: index.invalidLines, image: rest, n, ids: c.id, runNames: c.runNames, held: c.held, error: c.error, note: c.note, columns: {}, answers: [] };
  // Every column's bytes, and where its offset goes in the header.
  const sections: Array<{ offsets: Record<string, number>; name: string; bytes: Buffer }> = present.map((name) => ({ offsets: header.columns, name, bytes: bytesOf(c[name] as ArrayBufferView) }));
  for (const a of answers) {
    const entry = { run: a.run, n: a.n, held: a.held, columns: {} };
    header.answers.push(entry);
    for (const name of ANSWER_COLUMNS) sections.push({ offsets: entry.columns, name, bytes: bytesOf(a[name]) });
  }
  // Each column's offset from the header's end: known before the header is written.
  let at = 0;
  for (const section of sections) {
    section.offsets[section.name] = at;
    at = align(at + section.bytes.length);
  }
  await out.bytes(Buffer.alloc(12));
  for (const piece of jsonPieces(header)) await out.text(piece);
  const length = out.written - 12;
  await out.bytes(Buffer.alloc(align(out.written) - out.written));
  for (const { bytes } of sections) await out.bytes(bytes, Buffer.alloc(align(bytes.length) - bytes.length));
  await out.flush();
  const prefix = Buffer.alloc(12);
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(VERSION, 4);
  prefix.writeUInt32LE(length, 8);
  await out.file.write(prefix, 0, 12, 0);
}

/** A file written from its start: texts gathered in one buffer, bytes written as they are; `written` counts them. */
class FileOut {
  written = 0;
  private readonly buffer = Buffer.allocUnsafe(1 << 20);
  private used = 0;

  constructor(readonly file: FileHandle) {}

  async text(piece: string): Promise<void> {
    // At most three bytes a UTF-16 unit: a piece that may not fit goes after what is gathered, one too big alone.
    if (piece.length * 3 > this.buffer.length - this.used) await this.flush();
    if (piece.length * 3 > this.buffer.length) return this.bytes(Buffer.from(piece));
    const length = this.buffer.write(piece, this.used);
    this.used += length;
    this.written += length;
  }

  async bytes(...parts: Buffer[]): Promise<void> {
    await this.flush();
    for (const part of parts) {
      await this.all(part, part.length);
      this.written += part.length;
    }
  }

  async flush(): Promise<void> {
    await this.all(this.buffer, this.used);
    this.used = 0;
  }

  /** A write may take fewer bytes than it was given (fs.writeFile goes on likewise). */
  private async all(bytes: Buffer, length: number): Promise<void> {
    for (let from = 0; from < length; ) from += (await this.file.write(bytes, from, length - from)).bytesWritten;
  }
}

const bytesOf = (column: ArrayBufferView) => Buffer.from(column.buffer, column.byteOffset, column.byteLength);

const align = (at: number) => Math.ceil(at / 8) * 8;

function isPosition(v: unknown): v is JournalPosition {
  const p = v as Record<string, unknown> | undefined;
  return !!p && typeof p.dev === 'number' && typeof p.ino === 'number' && typeof p.bytes === 'number' && typeof p.head === 'string' && typeof p.before === 'string';
}

/** The shape, column by column: anything that does not fit means the file is not an index this version wrote. */
function isImage(image: StoreImage): boolean {
  if (!Array.isArray(image.runs) || typeof image.promptsRecorded !== 'boolean' || !Array.isArray(image.verdicts)) return false;
  if (image.listedTotal !== null && typeof image.listedTotal !== 'number') return false;
  if (!Array.isArray(image.batches) || !(image.batches as unknown as Array<Record<string, unknown>>).every((b) => b && typeof b.file === 'string' && Array.isArray(b.ids))) return false;
  for (const run of image.runs as unknown as Array<Record<string, unknown>>) {
    if (!run || typeof run.runId !== 'string' || !Array.isArray(run.latencies) || !Array.isArray(run.answerTimes) || typeof run.errors !== 'object') return false;
  }
  const c = image.traces;
  if (!Array.isArray(c.runNames) || !isTextMap(c.held?.p) || !isTextMap(c.held?.a) || !isTextMap(c.error) || !isTextMap(c.note)) return false;
  const names = c.runNames.length;
  for (let i = 0; i < c.id.length; i++) {
    if (typeof c.id[i] !== 'string' || c.state[i]! >= LOCAL_STATES.length || c.run[i]! >= names || c.run[i]! < -1) return false;
    if (!isPlace(c.p[i]!, c.held.p[i]) || !isPlace(c.a[i]!, c.held.a[i])) return false;
  }
  return true;
}

/** A text's place: an offset, -1 (none) or -2 (the text is held in the header). */
function isPlace(at: number, held: string | undefined): boolean {
  return Number.isInteger(at) && (at >= -1 || (at === -2 && typeof held === 'string'));
}

function isTextMap(v: unknown): v is Record<number, string> {
  return !!v && typeof v === 'object' && Object.values(v).every((t) => typeof t === 'string');
}
