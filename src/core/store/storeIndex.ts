import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { JournalPosition } from '../journal/journal';
import { ANSWER_FLAG, HELD } from './runAnswers';
import type { RunAnswersImage } from './runAnswers';
import { LOCAL_STATES, newColumns } from './traceStore';
import type { StoreImage } from './traceStore';
import { align, ANSWER_COLUMNS, INDEX_VERSION, indexPath, MAGIC, WIDTH } from './indexFormat';
import type { AnswerColumn, Header, NumberColumn, StoreIndex } from './indexFormat';

// Reading the index beside a journal; its format is indexFormat.ts's, its writing storeIndexWrite.ts's.
export { INDEX_VERSION, indexPath } from './indexFormat';
export type { StoreIndex } from './indexFormat';
const VERSION = INDEX_VERSION;

const NULLABLE = new Set<NumberColumn>(['ms', 'ft', 'answeredAt', 'submittedAt', 'tp', 'tc']);

/**
 * The index beside a journal, or undefined when there is none or it cannot be used (another version, another
 * evaluation, cut short, not ours): the caller then reads the journal whole and writes a new one. Whether the index
 * still fits the journal (the same file, not cut shorter) is for the journal's read from its position to say.
 */
export async function readIndex(journalFile: string, key: string): Promise<StoreIndex | undefined> {
  let file: FileHandle;
  try {
    file = await open(indexPath(journalFile), 'r');
  } catch {
    return undefined;
  }
  try {
    return await decode(file, key);
  } catch {
    return undefined;
  } finally {
    await file.close().catch(() => undefined);
  }
}

/**
 * The header and the columns read apart: the columns are views of their own bytes, which would otherwise keep the
 * header's bytes (3 MB at 100,000 traces, the ids and the runs' figures as JSON) alive as long as the store.
 */
async function decode(file: FileHandle, key: string): Promise<StoreIndex | undefined> {
  const size = (await file.stat()).size;
  if (endianness() !== 'LE' || size < 12) return undefined;
  const prefix = await readAt(file, 0, 12);
  if (prefix.toString('latin1', 0, 4) !== MAGIC || prefix.readUInt32LE(4) !== VERSION) return undefined;
  const headerEnd = 12 + prefix.readUInt32LE(8);
  if (headerEnd > size) return undefined;
  const h = JSON.parse((await readAt(file, 12, headerEnd - 12)).toString('utf8')) as Header;
  const base = align(headerEnd);
  if (h.key !== key || !isPosition(h.position) || typeof h.invalidLines !== 'number' || !Array.isArray(h.ids) || h.ids.length !== h.n) return undefined;
  // A buffer of its own starts its memory at offset 0, which is 8-aligned: every column is a view, none a copy.
  const bytes = base < size ? await readAt(file, base, size - base) : Buffer.alloc(0);
  return fromHeader(h, bytes);
}

/** `length` bytes from `position`, in a buffer of their own; throws when the file ends first (then it is no index). */
async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const out = Buffer.allocUnsafeSlow(length);
  for (let got = 0; got < length; ) {
    const { bytesRead } = await file.read(out, got, length - got, position + got);
    if (bytesRead === 0) throw new Error('the index ends early');
    got += bytesRead;
  }
  return out;
}

/** The store's image from the header and the columns' bytes (offsets from the header's end, so from bytes' start). */
function fromHeader(h: Header, bytes: Buffer): StoreIndex | undefined {
  const columns = newColumns(0);
  columns.id = h.ids;
  columns.runNames = h.runNames;
  columns.held = h.held;
  columns.error = h.error;
  columns.note = h.note;
  for (const name of Object.keys(WIDTH) as NumberColumn[]) {
    const at = placed(h.columns?.[name]);
    if (at === undefined && NULLABLE.has(name)) {
      (columns as unknown as Record<string, undefined>)[name] = undefined;
      continue;
    }
    if (typeof at !== 'number' || at % 8 !== 0 || at + h.n * WIDTH[name] > bytes.length) return undefined;
    columns[name] = view(bytes, name, at, h.n) as never;
  }
  const answers = decodeAnswers(bytes, h);
  if (!answers) return undefined;
  const image: StoreImage = { ...h.image, traces: columns, answers };
  return isImage(image) ? { position: h.position, invalidLines: h.invalidLines, image } : undefined;
}

/** Bytes per answer, and the typed array each column is. */
const ANSWER_WIDTH: Record<AnswerColumn, number> = { row: 4, at: 8, len: 4, ms: 8, flags: 1, digest: 8 };
const ANSWER_ARRAY = { row: Int32Array, at: Float64Array, len: Uint32Array, ms: Float64Array, flags: Uint8Array, digest: Uint32Array };

/** Each run's answers, checked answer by answer (a row the store has, a place or a held text); undefined: not ours. */
function decodeAnswers(bytes: Buffer, h: Header): RunAnswersImage[] | undefined {
  if (!Array.isArray(h.answers)) return undefined;
  const out: RunAnswersImage[] = [];
  for (const a of h.answers) {
    if (!a || typeof a.run !== 'string' || !Number.isInteger(a.n) || a.n < 0 || !isTextMap(a.held)) return undefined;
    const image = { run: a.run, n: a.n, held: { ...a.held } } as RunAnswersImage;
    for (const name of ANSWER_COLUMNS) {
      const at = placed(a.columns?.[name]);
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

/** A column's offset in the columns' bytes, from the header (undefined: absent; NaN: not an offset). */
function placed(offset: unknown): number | undefined {
  if (offset === undefined) return undefined;
  return typeof offset === 'number' && Number.isInteger(offset) && offset >= 0 ? offset : NaN;
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
