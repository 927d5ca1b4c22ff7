import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { journalPath, readJournal } from '../../src/core/journal/journal';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { JournalText } from '../../src/core/journal/journalText';
import type { TextSource } from '../../src/core/journal/journalText';
import { compareRuns } from '../../src/core/report/compareRuns';
import { EvaluationSession } from '../../src/core/session/session';
import { HELD } from '../../src/core/store/runAnswers';
import { INDEX_VERSION, indexPath } from '../../src/core/store/storeIndex';
import { TraceStore } from '../../src/core/store/traceStore';
import { tempDir } from './helpers/runs';

const KEY = { origin: 'http://127.0.0.1:9', kind: 'benchmark' as const, evaluationId: 8 };
const TRICKY = ['plain', 'quote " and \\" and \\\\', 'ends with a backslash \\', 'é 日本 🙂 \u0000 nul', '"a":"not the key"', 'x'.repeat(200_000)];

/** Two runs over the tricky texts: B the same except t1 (one escaped character more) and t3 (not answered). */
function twoRuns(): JournalRecord[] {
  const ids = TRICKY.map((_, i) => `t${i}`);
  const lines: JournalRecord[] = [{ t: 'run', at: 1, run: 'A' }];
  TRICKY.forEach((a, i) => lines.push({ t: 'answer', id: ids[i]!, a, at: 2, ms: i, run: 'A' }));
  lines.push({ t: 'run', at: 3, run: 'B' });
  TRICKY.forEach((a, i) => {
    if (i === 3) return;
    const text = i === 1 ? a.replace('\\"', '\\\\"') : a;
    // t4's line names no run: it is the run's that was latest when it was written.
    lines.push(i === 4 ? { t: 'answer', id: ids[i]!, a: text, at: 4 } : { t: 'answer', id: ids[i]!, a: text, at: 4, run: 'B' });
  });
  lines.push({ t: 'submitted', id: 't0', at: 5 });
  return lines;
}

function write(path: string, records: JournalRecord[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''), { mode: 0o600 });
}

/** A source that counts its reads: the comparison itself must make none. */
function counted(inner: TextSource): TextSource & { reads: number } {
  const source = { reads: 0, read: (o: number, l: number, f: 'p' | 'a') => (source.reads++, inner.read(o, l, f)), close: () => inner.close() };
  return source;
}

const EXPECTED = [['t0', false], ['t1', true], ['t2', false], ['t3', true], ['t4', false], ['t5', false]];

describe('Compare Runs is a lookup in the answers the store keeps per run', function () {
  this.timeout(60_000);

  it('finds the same and the differing answers for tricky texts with no read of the journal, and reads each back exactly', async () => {
    const file = join(tempDir('eval-runner-compare-'), 'journal.jsonl');
    write(file, twoRuns());
    const store = new TraceStore().readFrom(new JournalText(file));
    await readJournal(file, undefined, () => (record, at) => store.apply(record, at));
    const source = counted(new JournalText(file));
    // The journal is read once, into the store; the comparison needs only what the store kept.
    const kept = readFileSync(file);
    rmSync(file);
    const rows = compareRuns(store, source, 'A', 'B');
    assert.deepEqual(rows.map((r) => [r.traceId, r.differs]), EXPECTED);
    assert.equal(source.reads, 0, 'no answer read to compare');
    writeFileSync(file, kept);
    rows.forEach((r, i) => assert.equal(r.a!.answer, TRICKY[i]));
    assert.equal(rows[3]!.b, undefined);
    assert.equal(rows[1]!.a!.latencyMs, 1);
    assert.equal(rows[4]!.b!.answer, TRICKY[4]);
    source.close();
  });

  it('keeps an answer committed by an action as its place once it is on disk, with its digest', async () => {
    const stateDir = tempDir();
    write(journalPath(stateDir, KEY), twoRuns());
    const session = new EvaluationSession(KEY, stateDir);
    await session.saveAnswer('t2', 'edited by a reviewer');
    const b = session.store.runAnswers('B')!.columns();
    assert.ok(Array.from(b.at).every((at) => at >= 0), 'every answer of run B is a place');
    assert.deepEqual(b.held, {}, 'no text held once written');
    const rows = await session.compare('A', 'B');
    assert.equal(rows.find((r) => r.traceId === 't2')!.differs, true);
    assert.equal(rows.find((r) => r.traceId === 't2')!.b!.answer, 'edited by a reviewer');
    assert.equal(rows.find((r) => r.traceId === 't2')!.b!.by, 'user');
  });

  it('an answer applied before it is written is held, then kept as its place (the commit, then the settle)', () => {
    const store = new TraceStore().readFrom(counted(new JournalText('/nonexistent')));
    const record: JournalRecord = { t: 'answer', id: 'x', a: 'held for now', at: 1, run: 'R' };
    store.apply({ t: 'run', at: 0, run: 'R' });
    store.apply(record);
    assert.equal(store.runAnswers('R')!.columns().at[0], HELD);
    assert.equal(store.runAnswers('R')!.columns().held[0], 'held for now');
    store.settle(record, { offset: 40, length: 50 });
    assert.deepEqual([store.runAnswers('R')!.columns().at[0], store.runAnswers('R')!.columns().held], [40, {}]);
    // The digest kept is the text's SHA-256, its first 8 bytes as little-endian words, whatever the text.
    TRICKY.forEach((a, i) => store.apply({ t: 'answer', id: `d${i}`, a, at: 2, run: 'R' }));
    const words = store.runAnswers('R')!.columns().digest;
    TRICKY.forEach((a, i) => {
      const sha = createHash('sha256').update(a).digest();
      assert.deepEqual([...words.subarray((i + 1) * 2, (i + 2) * 2)], [0, 4].map((at) => sha.readUInt32LE(at)), a.slice(0, 40));
    });
  });

  it('a run keeps room for one answer per trace, not the next power of two; more only past them', () => {
    const store = new TraceStore();
    store.setListed(Array.from({ length: 100 }, (_, i) => ({ traceId: `t${i}`, content: 'p' })));
    store.apply({ t: 'run', at: 0, run: 'R' });
    for (let i = 0; i < 100; i++) store.apply({ t: 'answer', id: `t${i}`, a: `a${i}`, at: 1, run: 'R' });
    // The columns handed out are the kept ones cut to the answers: their buffer is the room kept.
    const room = () => store.runAnswers('R')!.columns().row.buffer.byteLength / Int32Array.BYTES_PER_ELEMENT;
    assert.equal(room(), 100);
    store.apply({ t: 'answer', id: 't7', a: 'again', at: 2, run: 'R' });
    assert.equal(store.runAnswers('R')!.size, 101);
    assert.ok(room() >= 101);
    // A store that learns its traces from their answers has one trace more at each: the room still grows by a share,
    // not by one answer and a copy of every column each time.
    const learning = new TraceStore();
    learning.apply({ t: 'run', at: 0, run: 'L' });
    for (let i = 0; i < 66; i++) learning.apply({ t: 'answer', id: `t${i}`, a: `a${i}`, at: 1, run: 'L' });
    assert.ok(learning.runAnswers('L')!.columns().row.buffer.byteLength / Int32Array.BYTES_PER_ELEMENT >= 72);
  });

  it('the index keeps each run’s answers: a store opened from it compares without the journal’s lines', async () => {
    const stateDir = tempDir();
    const path = journalPath(stateDir, KEY);
    // Past the index's 1 MB: 300 traces of 4 KB in two runs.
    const records: JournalRecord[] = [{ t: 'run', at: 1, run: 'A' }];
    for (let i = 0; i < 300; i++) records.push({ t: 'answer', id: `t${i}`, a: `${i} ${'a'.repeat(4000)}`, at: 2, ms: i, run: 'A' });
    records.push({ t: 'run', at: 3, run: 'B' });
    for (let i = 0; i < 300; i++) records.push({ t: 'answer', id: `t${i}`, a: i % 3 ? `${i} ${'a'.repeat(4000)}` : `other ${i}`, at: 4, ms: i, run: 'B', ...(i === 5 ? { err: true } : {}) });
    records.push({ t: 'end', at: 5, run: 'B', outcome: 'completed' }, { t: 'submitted', id: 't0', at: 6 });
    write(path, records);
    const first = new EvaluationSession(KEY, stateDir);
    const whole = (await first.compare('A', 'B')).map((r) => [r.traceId, r.differs, r.a!.latencyMs, r.b!.errorAnswer]);
    const index = readFileSync(indexPath(path));
    assert.equal(index.readUInt32LE(4), INDEX_VERSION);
    // Every answer line spoiled where only a whole read would see it (past the first bytes, which tell the file): the
    // store from the index must not need them.
    const bytes = readFileSync(path);
    for (let at = bytes.indexOf('"t":"answer"', 64); at >= 0; at = bytes.indexOf('"t":"answer"', at + 1)) bytes.write('"t":"spoilt"', at);
    writeFileSync(path, bytes);
    const second = new EvaluationSession(KEY, stateDir);
    const rows = await second.compare('A', 'B');
    assert.deepEqual(rows.map((r) => [r.traceId, r.differs, r.a!.latencyMs, r.b!.errorAnswer]), whole);
    assert.equal(rows.filter((r) => r.differs).length, 100);
    assert.equal(second.store.runAnswers('A')!.size, 300);
  });

  it('an index of the version before (no answers kept) is rebuilt from the journal, never misread', async () => {
    const stateDir = tempDir();
    const path = journalPath(stateDir, KEY);
    const records: JournalRecord[] = [{ t: 'run', at: 1, run: 'A' }];
    for (let i = 0; i < 300; i++) records.push({ t: 'answer', id: `t${i}`, a: `${i} ${'a'.repeat(4000)}`, at: 2, run: 'A' });
    write(path, records);
    await new EvaluationSession(KEY, stateDir).load();
    const index = readFileSync(indexPath(path));
    index.writeUInt32LE(INDEX_VERSION - 1, 4);
    writeFileSync(indexPath(path), index);
    // A line the index covers, changed: only a whole read sees it.
    const bytes = readFileSync(path);
    bytes.write('"id":"u40"', bytes.indexOf('"id":"t40"'));
    writeFileSync(path, bytes);
    const session = new EvaluationSession(KEY, stateDir);
    await session.load();
    assert.ok(session.store.get('u40'), 'the journal was read whole');
    assert.equal(session.store.runAnswers('A')!.size, 300);
    assert.equal(readFileSync(indexPath(path)).readUInt32LE(4), INDEX_VERSION, 'a new index was written');
  });
});
