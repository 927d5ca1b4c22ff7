// Writing the index beside a journal (its format: indexFormat.ts; its reading: storeIndex.ts). A file of its own, so the extension
// loads it only when it first keeps an index (dist/storeIndexWrite.js); the CLI and the runner bundle it.
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { jsonPieces } from './jsonPieces';
import { align, ANSWER_COLUMNS, INDEX_VERSION, indexPath, MAGIC, WIDTH } from './indexFormat';
import type { Header, NumberColumn, StoreIndex } from './indexFormat';

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
  prefix.writeUInt32LE(INDEX_VERSION, 4);
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
