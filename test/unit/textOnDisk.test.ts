import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { journalPath, readJournal } from '../../src/core/journal/journal';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { EvaluationSession } from '../../src/core/session/session';
import { sessionId } from '../../src/core/session/storeSync';
import { jsonPieces } from '../../src/core/store/jsonPieces';
import { indexPath, readIndex } from '../../src/core/store/storeIndex';
import { writeIndex } from '../../src/core/store/storeIndexWrite';
import { TraceStore } from '../../src/core/store/traceStore';
import { tempDir } from './helpers/runs';

const KEY = { origin: 'http://127.0.0.1:9', kind: 'benchmark' as const, evaluationId: 7 };
// Text that must come back exactly: multi-byte characters (some split across the reader's chunks), NUL, CRLF,
// a lone line separator, and 200 KB.
const TRICKY = ['Traduis : « Bonjour » 🌍 مرحبا', 'nul\u0000byte', 'line\r\nbreak\u2028', `${'x'.repeat(200_000)}€`, '"quoted" \\ back'];

/** A journal as this version writes it: the list a prompt per line, a run, an answer per trace (some submitted). */
function seed(stateDir: string, traces: number, pad = 0): string {
  const path = journalPath(stateDir, KEY);
  mkdirSync(dirname(path), { recursive: true });
  const text = (i: number) => `${TRICKY[i % TRICKY.length]!}${'·'.repeat(pad)}`;
  const lines: JournalRecord[] = [];
  for (let i = 0; i < traces; i++) lines.push({ t: 'item', id: `t${i}`, p: text(i), at: 1 });
  lines.push({ t: 'list', at: 1, total: traces, full: true }, { t: 'run', at: 2, run: 'r1', target: 'echo' });
  for (let i = 0; i < traces; i++) lines.push({ t: 'answer', id: `t${i}`, a: `answer ${text(i)}`, at: 3, ms: i, run: 'r1' });
  for (let i = 0; i < traces; i += 2) lines.push({ t: 'submitted', id: `t${i}`, at: 4 });
  writeFileSync(path, lines.map((r) => `${JSON.stringify(r)}\n`).join(''), { mode: 0o600 });
  return path;
}

/** The index's JSON header (see storeIndex.ts: magic, version, header length, header), and where its columns start. */
function header(index: Buffer): { n: number; columns: Record<string, number>; base: number } {
  const end = 12 + index.readUInt32LE(8);
  return { ...(JSON.parse(index.toString('utf8', 12, end)) as { n: number; columns: Record<string, number> }), base: Math.ceil(end / 8) * 8 };
}

/** The index with row 3 of one numeric column set to a value no index writes. */
function spoiled(index: Buffer, column: string, width: 1 | 8, value: number): Buffer {
  const copy = Buffer.from(index);
  const h = header(copy);
  const at = h.base + h.columns[column]! + 3 * width;
  if (width === 1) copy.writeUInt8(value, at);
  else copy.writeDoubleLE(value, at);
  return copy;
}

/** What each trace shows, texts read back: the same whichever way the store was built. */
function shown(store: TraceStore) {
  return [...store.traces.values()].map((t) => [t.traceId, t.state, t.prompt, t.answer, t.latencyMs, t.rating ?? null, t.note ?? null, t.submittedAt ?? null]);
}

async function whole(path: string) {
  return shown(TraceStore.fromRecords((await readJournal(path)).records));
}

describe('text stays on disk: the store keeps places, an index beside the journal opens it', function () {
  this.timeout(60_000);

  it('keeps where each text is, not the text, and reads every tricky text back exactly', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 25);
    const session = new EvaluationSession(KEY, stateDir);
    await session.load();
    const columns = session.store.image().traces;
    assert.equal(columns.id.length, 25);
    columns.id.forEach((id, i) => assert.ok(columns.p[i]! >= 0 && columns.held.p[i] === undefined, `the prompt of ${id} is a place, not a text`));
    columns.id.forEach((id, i) => assert.ok(columns.a[i]! >= 0 && columns.held.a[i] === undefined, `the answer of ${id} is a place, not a text`));
    for (let i = 0; i < 25; i++) {
      const t = session.store.get(`t${i}`)!;
      assert.equal(t.prompt, TRICKY[i % TRICKY.length]);
      assert.equal(t.answer, `answer ${TRICKY[i % TRICKY.length]}`);
    }
    assert.deepEqual(shown(session.store), await whole(path));
  });

  it('a text written by an action is read back from its place once it is on disk', async () => {
    const stateDir = tempDir();
    seed(stateDir, 5);
    const session = new EvaluationSession(KEY, stateDir);
    await session.saveAnswer('t1', 'edited: 🌍\u0000 done');
    const columns = session.store.image().traces;
    assert.ok(columns.a[columns.id.indexOf('t1')]! >= 0, 'the edited answer is a place once written');
    assert.equal(session.store.get('t1')!.answer, 'edited: 🌍\u0000 done');
    assert.equal(new EvaluationSession(KEY, stateDir).store.get('t1'), undefined);
    const other = new EvaluationSession(KEY, stateDir);
    await other.load();
    assert.equal(other.store.get('t1')!.answer, 'edited: 🌍\u0000 done');
  });

  it('writes an index past 1 MB; a journal that grew after it (a crash before the index was written) is read on from it', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 60, 2000);
    const first = new EvaluationSession(KEY, stateDir);
    await first.load();
    assert.ok(existsSync(indexPath(path)), 'an index beside the journal');
    // Records another process wrote after the index (it died before writing its own).
    appendFileSync(path, `${JSON.stringify({ t: 'verdict', id: 't3', at: 9, rating: 'bad', note: 'after the index' })}\n${JSON.stringify({ t: 'submitted', id: 't5', at: 9 })}\n`);
    // A byte changed inside the indexed part, where only a whole read would see it: it proves the index was used.
    const bytes = readFileSync(path);
    const inside = bytes.indexOf(Buffer.from('"id":"t40"'));
    bytes.write('"id":"u40"', inside);
    writeFileSync(path, bytes);
    const second = new EvaluationSession(KEY, stateDir);
    await second.load();
    assert.equal(second.store.get('t3')!.note, 'after the index');
    assert.equal(second.store.get('t5')!.state, 'submitted');
    assert.equal(second.store.get('u40'), undefined, 'the indexed part was not read again');
    assert.equal(second.store.get('t40')!.answer, `answer ${TRICKY[0]}${'·'.repeat(2000)}`);
  });

  it('an index gives back every field of every trace as a whole read does (sparse columns, times, runs)', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 60, 2000);
    const extra: JournalRecord[] = [
      { t: 'failed', id: 't1', reason: 'HTTP 500 from the model', stage: 'target', at: 20 },
      { t: 'verdict', id: 't2', at: 21, rating: 'good', note: 'fine 🌍' },
      { t: 'answer', id: 't3', a: 'with tokens', at: 22, ms: 7, ft: 3, tp: 11, tc: 12, run: 'r1' },
      { t: 'submitted', id: 't3', at: 23, dup: true },
      { t: 'skipped', id: 't4', reason: 'not for this model', at: 24 },
      { t: 'answer', id: 't6', a: 'edited', at: 25, by: 'user' },
    ];
    appendFileSync(path, extra.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const first = new EvaluationSession(KEY, stateDir);
    await first.load();
    const second = new EvaluationSession(KEY, stateDir);
    await second.load();
    const every = (store: TraceStore) =>
      [...store.traces.values()].map((t) => ({ ...(t as unknown as { toJSON(): object }).toJSON(), prompt: t.prompt, answer: t.answer }));
    assert.deepEqual(every(second.store), every(TraceStore.fromRecords((await readJournal(path)).records)));
    // A run's unset fields (endedAt of a run still open…) are absent from the index rather than undefined.
    assert.deepEqual(JSON.parse(JSON.stringify(second.store.runs)), JSON.parse(JSON.stringify(first.store.runs)));
    assert.deepEqual(second.store.counts, first.store.counts);
  });

  it('an index whose header is written a piece at a time gives back ids of any text, many and long', async () => {
    const path = `${tempDir()}/journal.jsonl`;
    const position = { dev: 1, ino: 2, bytes: 3, head: 'h', before: 'b' };
    // More ids than a piece holds, one longer than the writer's buffer, surrogate pairs and escapes throughout.
    const ids = [...Array.from({ length: 10_000 }, (_, i) => `t${i} 🙂 "q" \\ \u2028`), '🌍'.repeat(600_000)];
    const store = new TraceStore();
    store.setListed(ids.map((traceId) => ({ traceId, content: 'p' })));
    await writeIndex(path, 'k', { position, invalidLines: 0, image: store.image() });
    const index = await readIndex(path, 'k');
    assert.deepEqual(index?.image.traces.id, ids);
  });

  it('a status opened from the index makes no Map of the ids; a lookup after it finds every trace, a new one too', async () => {
    const stateDir = tempDir();
    seed(stateDir, 60, 2000);
    await new EvaluationSession(KEY, stateDir).load();
    // Map.prototype.set watched for the ids while the status opens the store and counts.
    const set = Object.getOwnPropertyDescriptor(Map.prototype, 'set')!;
    let ids = 0;
    Object.defineProperty(Map.prototype, 'set', {
      ...set,
      value(this: Map<unknown, unknown>, key: unknown, value: unknown) {
        if (typeof key === 'string' && /^t\d+$/.test(key)) ids++;
        return (set.value as Map<unknown, unknown>['set']).call(this, key, value);
      },
    });
    const session = new EvaluationSession(KEY, stateDir);
    const status = await session.status().finally(() => Object.defineProperty(Map.prototype, 'set', set));
    assert.equal(ids, 0, 'the status put the trace ids in a Map');
    assert.deepEqual([status.total, status.counts.submitted], [60, 30]);
    assert.deepEqual(['t0', 't59', 'u1'].map((id) => session.store.get(id)?.traceId), ['t0', 't59', undefined]);
    session.store.apply({ t: 'item', id: 'u1', p: 'new', at: 5 });
    assert.deepEqual([session.store.get('u1')?.prompt, session.store.get('t7')?.traceId, session.store.traces.size], ['new', 't7', 61]);
  });

  it('the columns read from an index keep none of its header’s bytes', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 60, 2000);
    await new EvaluationSession(KEY, stateDir).load();
    const file = readFileSync(indexPath(path));
    const index = await readIndex(path, sessionId(KEY));
    const { state, a } = index!.image.traces;
    const answers = index!.image.answers[0]!;
    for (const column of [state, a, answers.at, answers.digest]) assert.equal(column.buffer.byteLength, file.length - header(file).base);
  });

  it('the header’s pieces are JSON.stringify’s text, none of them the size of a long array', () => {
    const long = Array.from({ length: 20_000 }, (_, i) => (i % 7 === 0 ? undefined : i % 5 === 0 ? NaN : i % 3 === 0 ? `s${i} 🙂 "` : i + 0.5));
    const value = { a: 1, gone: undefined, empty: {}, none: [], nil: null, long, runs: [{ times: long, x: undefined, held: { 3: 'x' } }, 'plain'], nested: { deeper: [[1, undefined], {}] } };
    const pieces = [...jsonPieces(value)];
    assert.equal(pieces.join(''), JSON.stringify(value));
    assert.ok(Math.max(...pieces.map((p) => p.length)) < JSON.stringify(long).length / 3, 'a long array goes in pieces');
    for (const v of [{}, [], null, 'x', 3, [undefined], { u: undefined }]) assert.equal([...jsonPieces(v)].join(''), JSON.stringify(v));
  });

  it('the columns are cut to the traces once the list is whole, and so are the columns a run makes after it', () => {
    const store = new TraceStore();
    for (let i = 0; i < 1500; i++) store.apply({ t: 'item', id: `t${i}`, p: 'p', at: 1 });
    store.apply({ t: 'list', at: 1, total: 1500, full: true });
    store.apply({ t: 'answer', id: 't3', a: 'a', at: 2, ms: 5 });
    // The image's columns are the kept ones cut to the rows: their buffer is the room kept.
    const { flags, ms } = store.image().traces;
    assert.deepEqual([flags.buffer.byteLength / 2, ms!.buffer.byteLength / 8], [1500, 1500]);
    store.apply({ t: 'answer', id: 'later', a: 'a', at: 3, ms: 6 });
    assert.equal(store.get('later')?.latencyMs, 6);
    assert.equal(store.get('t3')?.latencyMs, 5);
  });

  it('an index deleted, cut short, or of another file is rebuilt from the journal, and written again', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 60, 2000);
    await new EvaluationSession(KEY, stateDir).load();
    const good = readFileSync(indexPath(path));
    const cases: Array<[string, () => void]> = [
      ['deleted', () => rmSync(indexPath(path))],
      ['cut short', () => writeFileSync(indexPath(path), good.subarray(0, good.length / 2))],
      ['garbage', () => writeFileSync(indexPath(path), '{"v":1,"key":"x"}')],
      ['the JSON index of an earlier version', () => writeFileSync(indexPath(path), JSON.stringify({ v: 4, key: 'x', image: {} }))],
      ['a state that is none', () => writeFileSync(indexPath(path), spoiled(good, 'state', 1, 99))],
      ['a text at no place', () => writeFileSync(indexPath(path), spoiled(good, 'p', 8, -7))],
      [
        'of a journal begun again',
        () => {
          writeFileSync(indexPath(path), good);
          rmSync(path);
          seed(stateDir, 61, 2000);
        },
      ],
    ];
    for (const [what, spoil] of cases) {
      spoil();
      const session = new EvaluationSession(KEY, stateDir);
      await session.load();
      assert.deepEqual(shown(session.store), await whole(path), what);
      assert.equal(header(readFileSync(indexPath(path))).n, session.store.traces.size, `${what}: a new index was written`);
    }
  });

  it('a torn tail after the index is left for the next read; then the whole record is taken', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 60, 2000);
    await new EvaluationSession(KEY, stateDir).load();
    const line = Buffer.from(`${JSON.stringify({ t: 'answer', id: 't9', a: 'new 🌍 answer', at: 10, by: 'user' })}\n`);
    const cut = line.indexOf(Buffer.from('🌍')) + 1;
    appendFileSync(path, line.subarray(0, cut));
    const reader = new EvaluationSession(KEY, stateDir);
    await reader.load();
    assert.equal(reader.store.get('t9')!.answer, `answer ${TRICKY[4]}${'·'.repeat(2000)}`);
    appendFileSync(path, line.subarray(cut));
    await reader.load();
    assert.equal(reader.store.get('t9')!.answer, 'new 🌍 answer');
    assert.deepEqual(shown(reader.store), await whole(path));
  });
});
