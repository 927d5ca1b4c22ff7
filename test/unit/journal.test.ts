import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JournalLockedError, openJournal, parseJournal, readJournal } from '../../src/core/journal/journal';
import type { RecordLocation } from '../../src/core/journal/journal';
import { TraceStore } from '../../src/core/store/traceStore';
import { faultyFs } from './helpers/faultyFs';
import { tempDir } from './helpers/runs';

describe('journal', () => {
  it('makes every appended record durable and readable, in order', async () => {
    const path = join(tempDir(), 'sub', 'benchmark-1.jsonl');
    const { journal } = await openJournal(path);
    await Promise.all(
      Array.from({ length: 120 }, (_, i) => journal.append({ t: 'answer', id: `t${i}`, p: 'p', a: `a\n${i}`, at: i })),
    );
    // Resolved appends are on disk before close.
    assert.equal(readFileSync(path, 'utf8').split('\n').filter(Boolean).length, 120);
    await journal.close();
    const { records } = await readJournal(path);
    assert.deepEqual(
      records.map((r) => (r.t === 'answer' ? r.a : '')),
      Array.from({ length: 120 }, (_, i) => `a\n${i}`),
    );
    // Prompts and answers are the user's: readable by its owner only.
    if (process.platform !== 'win32') assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  it('tells a record\'s place once its line is on disk, before it resolves, and not when the write fails', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { fs } = faultyFs((_kind, text) => text.includes('"id":"full"'));
    const { journal } = await openJournal(path, { fs });
    const told: Array<{ id: string; at: RecordLocation; line: string }> = [];
    const onDisk = (id: string) => (at: RecordLocation) => told.push({ id, at, line: readFileSync(path).subarray(at.offset, at.offset + at.length).toString() });
    const first = journal.place({ t: 'answer', id: 'a', a: 'ü 1', at: 1 }, onDisk('a'));
    const second = journal.place({ t: 'answer', id: 'b', a: '2', at: 2 }, onDisk('b'));
    assert.equal(told.length, 0, 'nothing is told before the write');
    await first.durable.then(() => assert.deepEqual(told.map((t) => t.id), ['a', 'b'], 'told before the record resolves'));
    await second.durable;
    assert.deepEqual(told.map((t) => t.at), [first.at, second.at]);
    assert.deepEqual(told.map((t) => JSON.parse(t.line) as unknown), [{ t: 'answer', id: 'a', a: 'ü 1', at: 1 }, { t: 'answer', id: 'b', a: '2', at: 2 }]);
    const failed = journal.place({ t: 'answer', id: 'full', a: '3', at: 3 }, onDisk('full'));
    await assert.rejects(failed.durable, /disk holding .* is full/);
    assert.equal(told.length, 2, 'a write that failed tells no place');
    await journal.close();
  });

  it('gives the records of one write one promise, at most maxBatch lines a write', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    let writes = 0;
    const { fs } = faultyFs((kind) => kind === 'journal' && writes++ < 0);
    const { journal } = await openJournal(path, { fs, maxBatch: 2 });
    const durables = Array.from({ length: 5 }, (_, i) => journal.place({ t: 'submitted', id: `t${i}`, at: i }).durable);
    assert.equal(journal.backlog, 5);
    // A promise per write, not per record: two per trace cost a 20,000-trace run more than the writes (issue 36).
    assert.equal(new Set(durables).size, 3);
    assert.equal(durables[0], durables[1]);
    assert.equal(durables[2], durables[3]);
    await Promise.all(durables);
    assert.equal(writes, 3);
    assert.equal(journal.backlog, 0);
    await journal.close();
    assert.deepEqual(parseJournal(readFileSync(path, 'utf8')).records.map((r) => ('id' in r ? r.id : '')), ['t0', 't1', 't2', 't3', 't4']);
  });

  it('takes a place listener that throws as the listener\'s fault, not the disk\'s', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { journal } = await openJournal(path);
    const thrown = journal.place({ t: 'answer', id: 'a', a: '1', at: 1 }, () => {
      throw new Error('a store bug');
    });
    await thrown.durable;
    await journal.append({ t: 'answer', id: 'b', a: '2', at: 2 });
    assert.equal(journal.failure, undefined);
    await journal.close();
    assert.deepEqual(parseJournal(readFileSync(path, 'utf8')).records.map((r) => ('id' in r ? r.id : '')), ['a', 'b']);
  });

  it('tolerates and reports a torn last line, and cuts it before appending', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    writeFileSync(path, '{"t":"answer","id":"a","a":"x","at":1}\n{"t":"submitted","id":"a","at":2}\n{"t":"answer","id":"b","a":"y');
    const { journal, replay } = await openJournal(path);
    assert.equal(replay.tornTail, true);
    assert.equal(replay.records.length, 2);
    await journal.append({ t: 'answer', id: 'c', a: 'z', at: 3 });
    await journal.close();
    const after = parseJournal(readFileSync(path, 'utf8'));
    assert.equal(after.tornTail, false);
    assert.equal(after.corruptLines, 0);
    const store = TraceStore.fromRecords(after.records);
    assert.equal(store.get('a')!.state, 'submitted');
    assert.equal(store.get('b'), undefined, 'the torn record is dropped: that trace is redone');
    assert.equal(store.get('c')!.state, 'answered');
  });

  it('skips and counts a corrupt line in the middle', () => {
    const parsed = parseJournal('{"t":"answer","id":"a","a":"x","at":1}\nnot json\n{"t":"submitted","id":"a","at":2}\n');
    assert.equal(parsed.corruptLines, 1);
    assert.equal(parsed.records.length, 2);
  });

  it('refuses a second writer, and takes over the lock of a dead one', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const first = await openJournal(path);
    await assert.rejects(() => openJournal(path), JournalLockedError);
    await first.journal.close();
    // A lock left by a process that no longer exists (a SIGKILL) is stale.
    appendFileSync(`${path}.lock`, '2147483646');
    const second = await openJournal(path);
    await second.journal.close();
  });

  it('rebuilds trace states with the last record winning', () => {
    const store = TraceStore.fromRecords([
      { t: 'list', at: 0, total: 4 },
      { t: 'answer', id: 'a', p: 'pa', a: 'x', at: 1, ms: 5 },
      { t: 'failed', id: 'a', reason: 'HTTP 500', stage: 'submit', at: 2 },
      { t: 'answer', id: 'b', p: 'pb', a: 'y', at: 1 },
      { t: 'submitted', id: 'b', at: 3 },
      { t: 'skipped', id: 'c', reason: 'not applicable', at: 4 },
    ]);
    assert.equal(store.get('a')!.state, 'failed');
    assert.equal(store.get('a')!.answer, 'x', 'a submit failure keeps the answer for resubmission');
    assert.equal(store.get('b')!.state, 'submitted');
    assert.equal(store.get('c')!.state, 'skipped');
    assert.deepEqual(store.snapshotCounts(), { pending: 1, running: 0, answered: 0, submitted: 1, failed: 1, skipped: 1 });
  });
});
