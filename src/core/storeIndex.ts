import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { JournalPosition } from './journal';
import { LOCAL_STATES, TRACE_COLUMNS } from './traceStore';
import type { StoreImage } from './traceStore';

// The index's own format: another version's index is rebuilt from the journal, never misread.
const VERSION = 4;

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
 * The index beside a journal, or undefined when there is none or it cannot be used (another version, another
 * evaluation, cut short, not ours): the caller then reads the journal whole and writes a new one. Whether the index
 * still fits the journal (the same file, not cut shorter) is for the journal's read from its position to say.
 */
export async function readIndex(journalFile: string, key: string): Promise<StoreIndex | undefined> {
  let text: string;
  try {
    text = await readFile(indexPath(journalFile), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(text) as { v?: unknown; key?: unknown } & Partial<StoreIndex>;
    if (value.v !== VERSION || value.key !== key || !isPosition(value.position) || typeof value.invalidLines !== 'number') return undefined;
    const image = unpack(value.image);
    if (!isImage(image)) return undefined;
    return { position: value.position, invalidLines: value.invalidLines, image };
  } catch {
    return undefined;
  }
}

/** Writes the index whole, aside then renamed into place (a crash leaves the old one or none); owner-only. */
export async function writeIndex(journalFile: string, key: string, index: StoreIndex): Promise<void> {
  const path = indexPath(journalFile);
  const aside = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(aside, JSON.stringify({ v: VERSION, key, ...index, image: pack(index.image) }), { mode: 0o600 });
    await rename(aside, path);
  } catch {
    // An index is only a shortcut: without it the next open reads the journal whole.
    await rm(aside, { force: true }).catch(() => undefined);
  }
}

// Columns mostly empty (no error, no note, no tokens reported) are kept as their few entries; times as offsets from
// the earliest, a few digits instead of thirteen. A 100,000-trace index is about half the size and parses as fast.
const NULLABLE = ['ms', 'ft', 'answeredAt', 'submittedAt', 'tp', 'tc', 'error', 'note'] as const;
const TIMES = ['answeredAt', 'submittedAt'] as const;

type Packed = StoreImage & { base?: number; sparse?: Record<string, Record<string, unknown>> };

function pack(image: StoreImage): Packed {
  const c = image.traces as unknown as Record<string, unknown[]>;
  const n = c.id!.length;
  let base = Infinity;
  for (const key of TIMES) for (const t of c[key]!) if (typeof t === 'number' && t < base) base = t;
  if (base === Infinity) base = 0;
  const traces: Record<string, unknown> = { ...c };
  const sparse: Record<string, Record<string, unknown>> = {};
  for (const key of NULLABLE) {
    const column = TIMES.includes(key as (typeof TIMES)[number]) ? c[key]!.map((t) => (typeof t === 'number' ? t - base : t)) : c[key]!;
    let present = 0;
    for (const v of column) if (v !== null) present++;
    if (present * 2 >= n) traces[key] = column;
    else {
      delete traces[key];
      const entries: Record<string, unknown> = {};
      column.forEach((v, i) => {
        if (v !== null) entries[i] = v;
      });
      sparse[key] = entries;
    }
  }
  return { ...image, traces: traces as unknown as StoreImage['traces'], base, sparse };
}

/** The columns back as pack() found them; anything odd is left for isImage to refuse. */
function unpack(value: unknown): unknown {
  const packed = value as Packed | undefined;
  if (!packed || typeof packed !== 'object' || typeof packed.traces !== 'object' || packed.traces === null) return value;
  const c = packed.traces as unknown as Record<string, unknown[]>;
  if (!Array.isArray(c.id)) return value;
  const n = c.id.length;
  const base = typeof packed.base === 'number' ? packed.base : 0;
  for (const key of NULLABLE) {
    const entries = packed.sparse?.[key];
    if (entries && typeof entries === 'object') {
      const column = new Array<unknown>(n).fill(null);
      for (const [i, v] of Object.entries(entries)) if (Number(i) < n) column[Number(i)] = v;
      c[key] = column;
    }
    if (TIMES.includes(key as (typeof TIMES)[number]) && Array.isArray(c[key])) c[key] = c[key].map((t) => (typeof t === 'number' ? t + base : t));
  }
  const { base: _base, sparse: _sparse, ...image } = packed;
  return image;
}

function isPosition(v: unknown): v is JournalPosition {
  const p = v as Record<string, unknown> | undefined;
  return !!p && typeof p.dev === 'number' && typeof p.ino === 'number' && typeof p.bytes === 'number' && typeof p.head === 'string' && typeof p.before === 'string';
}

/** The shape, column by column: anything that does not fit means the file is not an index this version wrote. */
function isImage(v: unknown): v is StoreImage {
  const image = v as Record<string, unknown> | undefined;
  if (!image || !Array.isArray(image.runs) || typeof image.promptsRecorded !== 'boolean') return false;
  if (image.listedTotal !== null && typeof image.listedTotal !== 'number') return false;
  if (!Array.isArray(image.batches) || !(image.batches as Array<Record<string, unknown>>).every((b) => b && typeof b.file === 'string' && Array.isArray(b.ids))) return false;
  for (const run of image.runs as Array<Record<string, unknown>>) {
    if (!run || typeof run.runId !== 'string' || !Array.isArray(run.latencies) || !Array.isArray(run.answerTimes) || typeof run.errors !== 'object') return false;
  }
  const c = image.traces as Record<string, unknown[]> | undefined;
  if (!c || !Array.isArray(c.runNames) || !Array.isArray(c.id)) return false;
  const n = c.id.length;
  for (const key of TRACE_COLUMNS) if (!Array.isArray(c[key]) || c[key].length !== n) return false;
  const names = c.runNames.length;
  for (let i = 0; i < n; i++) {
    const state = c.state![i];
    const run = c.run![i];
    if (typeof c.id[i] !== 'string' || typeof state !== 'number' || !(state in LOCAL_STATES) || !isText(c.p![i]) || !isText(c.a![i])) return false;
    if (typeof c.pl![i] !== 'number' || typeof c.al![i] !== 'number' || typeof c.flags![i] !== 'number' || typeof run !== 'number' || run >= names) return false;
  }
  return true;
}

function isText(v: unknown): boolean {
  return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v) && v >= -1);
}
