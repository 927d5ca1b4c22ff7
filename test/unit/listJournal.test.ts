import assert from 'node:assert/strict';
import { readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { openJournal, readJournal } from '../../src/core/journal/journal';
import type { BatchPlaces, RecordLocation } from '../../src/core/journal/journal';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { itemPrompt, JournalText } from '../../src/core/journal/journalText';
import { NODE_FS } from '../../src/core/journal/storage';
import type { JournalFs } from '../../src/core/journal/storage';
import { RateScheduler } from '../../src/core/run/rateScheduler';
import { RunState } from '../../src/core/run/runState';
import { TargetCaller } from '../../src/core/run/targetCalls';
import { HeldPrompts } from '../../src/core/store/heldPrompts';
import { JournalWriteError, ListWriter } from '../../src/core/store/listWriter';
import { TraceStore } from '../../src/core/store/traceStore';
import { faultyFs } from './helpers/faultyFs';
import { scriptedTarget, tempDir } from './helpers/runs';

const items = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ traceId: `t${from + i}`, content: `prompt ${from + i} ü "quoted" \\ ${'🌍'.repeat(40)}` }));

const turns = async (n: number) => {
  for (let turn = 0; turn < n; turn++) await new Promise((resolve) => setImmediate(resolve));
};

/** A list writer on a disk that takes every journal write and finishes none until released. */
async function onHeldDisk() {
  const path = join(tempDir(), 'benchmark-1.jsonl');
  let release!: () => void;
  const disk = new Promise<void>((resolve) => (release = resolve));
  const fs: JournalFs = {
    ...NODE_FS,
    open: async (p, flags, mode) => {
      const handle = await NODE_FS.open(p, flags, mode);
      return { write: async (text) => (await disk, handle.write(text)), datasync: () => handle.datasync(), close: () => handle.close() };
    },
  };
  const { journal } = await openJournal(path, { fs });
  return { path, journal, release, list: new ListWriter(new TraceStore().readFrom(new JournalText(path)), journal, () => undefined) };
}

/** A batch's places, one location per line. */
const placesOf = (at: BatchPlaces | undefined): RecordLocation[] => Array.from(at!.offsets, (offset, i) => ({ offset, length: at!.lengths[i]! }));

describe('the prompt list in the journal', () => {
  it('places a batch of records as one write, each where its line is, in order with single records', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { fs, state } = faultyFs(() => false);
    const { journal } = await openJournal(path, { fs });
    const first = journal.place({ t: 'run', at: 1, run: 'r1' });
    const placed = journal.placeAll(items(300).map(({ traceId, content }) => ({ t: 'item', id: traceId, p: content, at: 2 })));
    const batch = { durable: placed.durable, at: placesOf(placed.at) };
    const last = journal.place({ t: 'item', id: 'last', p: '🌍'.repeat(40), at: 3 });
    await Promise.all([first.durable, batch.durable, last.durable]);
    await journal.close();
    assert.ok(state.writes <= 3, `${state.writes} writes`);
    const seen: RecordLocation[] = [];
    await readJournal(path, undefined, () => (_record: JournalRecord, at: RecordLocation) => void seen.push(at));
    assert.deepEqual(seen, [first.at, ...batch.at, last.at]);
    const file = readFileSync(path);
    assert.deepEqual(journal.lastWritten, file.subarray(-64), 'the last bytes a reader goes on from');
    assert.equal(journal.bytesWritten, file.length);
    assert.deepEqual(JSON.parse(file.subarray(batch.at[299]!.offset, batch.at[299]!.offset + batch.at[299]!.length).toString()), { t: 'item', id: 't299', p: items(300)[299]!.content, at: 2 });
    // Each item's line is JSON.stringify's, byte for byte.
    assert.equal(file.subarray(batch.at[0]!.offset, batch.at[299]!.offset + batch.at[299]!.length + 1).toString(), items(300).map(({ traceId, content }) => `${JSON.stringify({ t: 'item', id: traceId, p: content, at: 2 })}\n`).join(''));
  });

  it('a batch cut short by a kill keeps its whole lines, and the list is not whole until listed again', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { journal } = await openJournal(path);
    const store = new TraceStore().readFrom(new JournalText(path));
    const list = new ListWriter(store, journal, () => undefined);
    await list.add(items(100));
    await journal.close();
    // A kill in the middle of the batch's write leaves a torn line: the 41 lines before it stand.
    const located: RecordLocation[] = [];
    await readJournal(path, undefined, () => (_r: JournalRecord, place: RecordLocation) => void located.push(place));
    truncateSync(path, located[41]!.offset + 10);
    const { journal: reopened, replay } = await openJournal(path);
    assert.equal(replay.tornTail, true);
    const again = TraceStore.fromRecords(replay.records);
    assert.equal(again.traces.size, 41);
    assert.equal(again.promptsRecorded, false, 'no list record: the next run lists the prompts again');
    await reopened.close();
  });

  it('reads the next window of the list while the window before is on its way to disk, and waits for that one', async () => {
    const { path, journal, list, release } = await onHeldDisk();
    await list.add(items(600));
    let second = false;
    const next = list.add(items(600, 600)).then(() => (second = true));
    await turns(10);
    assert.equal(second, false, 'the second window waits for the first on disk');
    release();
    await next;
    await list.end();
    await journal.close();
    const ids = readFileSync(path, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { id?: string }).id);
    assert.deepEqual(ids.slice(0, 1200), items(1200).map((i) => i.traceId));
  });

  it('a window of long prompts waits for its own write: two in flight would hold their texts twice', async () => {
    const { journal, list, release } = await onHeldDisk();
    let done = false;
    const first = list.add(items(600).map((i) => ({ ...i, content: i.content.padEnd(2048, '.') }))).then(() => (done = true));
    await turns(10);
    assert.equal(done, false, 'the window waits for itself on disk');
    release();
    await first;
    await list.end();
    await journal.close();
  });

  it('a batch that cannot be written fails the list, its prompts still held by the store', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { fs } = faultyFs((kind, text) => kind === 'journal' && text.includes('"t":"item"'));
    const { journal } = await openJournal(path, { fs });
    const store = new TraceStore().readFrom(new JournalText(path));
    const list = new ListWriter(store, journal, () => undefined);
    // Seen when the list waits for that window: at the next window or, here, at its end.
    await list.add(items(600));
    await assert.rejects(list.end(), JournalWriteError);
    assert.equal(store.get('t5')!.prompt, items(6)[5]!.content);
    await journal.close();
  });

  it('hands the prompts just listed to the target calls from memory, each once, and none of a list past the bound', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { journal } = await openJournal(path);
    const store = new TraceStore().readFrom(new JournalText(path));
    const held = new HeldPrompts();
    const list = new ListWriter(store, journal, () => undefined, held);
    await list.add(items(300));
    await list.end();
    await journal.close();
    // The journal's lines are gone: a prompt read back from them would fail; the calls take theirs from memory.
    truncateSync(path, 0);
    const run = new RunState(() => undefined, new AbortController().signal, undefined);
    const policy = { retries: 0, timeoutMs: 1000, maxRetryAfterMs: 1000, maxQuotaStrikes: 3, maxRateLimitRetries: 1, onError: 'fail' as const };
    const caller = new TargetCaller(scriptedTarget((prompt) => prompt), new RateScheduler({ concurrency: 4, initialPerSecond: Infinity }), policy, run, undefined, undefined, undefined, held);
    for (const { traceId, content } of items(300)) {
      const result = await caller.call(store.get(traceId)!, new AbortController().signal);
      assert.equal(typeof result === 'object' && 'answer' in result ? result.answer : result, content);
    }
    assert.equal(held.size, 0, 'each taken once');
    // A list whose prompts pass the bound holds none (its prompts are read back from the journal, in order).
    const small = new HeldPrompts(items(1)[0]!.content.length * 10);
    for (const { traceId, content } of items(11)) small.keep(traceId, content);
    assert.equal(small.size, 0);
    assert.equal(small.take('t0'), undefined);
    // Once the run is planned, only the prompts of the traces it will call are kept (a resumed run calls few).
    const some = new HeldPrompts();
    for (const { traceId, content } of items(5)) some.keep(traceId, content);
    some.retain([{ traceId: 't1' }, { traceId: 't3' }, { traceId: 'not listed' }]);
    assert.equal(some.size, 2, "the prompts of traces the run will not call are let go");
    assert.equal(some.take('t3'), items(5)[3]!.content);
    // A fresh run calls every prompt it listed: they stay where they are, not copied (a second table at the peak).
    const every = new HeldPrompts();
    for (const { traceId, content } of items(5)) every.keep(traceId, content);
    const set = Object.getOwnPropertyDescriptor(Map.prototype, 'set')!;
    let copied = 0;
    Object.defineProperty(Map.prototype, 'set', {
      ...set,
      value(this: Map<unknown, unknown>, key: unknown, value: unknown) {
        copied++;
        return (set.value as Map<unknown, unknown>['set']).call(this, key, value);
      },
    });
    try {
      every.retain(items(5).reverse());
    } finally {
      Object.defineProperty(Map.prototype, 'set', set);
    }
    assert.equal(copied, 0, 'retaining every held prompt copied them');
    assert.equal(every.size, 5);
    assert.equal(every.take('t4'), items(5)[4]!.content);
  });

  it('reads the item lines after a prompt ahead, in one read, when prompts are read in list order', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { journal } = await openJournal(path);
    const list = items(200);
    const batch = journal.placeAll([
      ...list.slice(0, 100).map(({ traceId, content }): JournalRecord => ({ t: 'item', id: traceId, p: content, at: 1 })),
      { t: 'answer', id: 't0', a: 'an answer between item lines', at: 2 },
      ...list.slice(100).map(({ traceId, content }): JournalRecord => ({ t: 'item', id: traceId, p: content, at: 3 })),
    ]);
    await batch.durable;
    await journal.close();
    const places = placesOf(batch.at);
    const text = new JournalText(path);
    assert.equal(text.read(places[0]!.offset, places[0]!.length, 'p'), list[0]!.content);
    assert.equal(text.read(places[1]!.offset, places[1]!.length, 'p'), list[1]!.content);
    // The second read, walking forward, took the item lines after it: they no longer need the file.
    truncateSync(path, 0);
    for (let i = 2; i < 100; i++) assert.equal(text.read(places[i]!.offset, places[i]!.length, 'p'), list[i]!.content);
    // Not past a line that is not an item.
    assert.throws(() => text.read(places[101]!.offset, places[101]!.length, 'p'), /changed under Eval Runner/);
    text.close();
  });

  it('places each line of a batch of one-byte characters, and of a batch with wider ones after it', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { journal } = await openJournal(path);
    const plain = Array.from({ length: 50 }, (_, i) => ({ id: `p${i}`, p: `plain "${i}" \\ ${'x'.repeat(i)}\n` }));
    const wide = Array.from({ length: 50 }, (_, i) => ({ id: `w${i}`, p: i % 2 ? `plain ${i}` : `wide ü ${'🌍'.repeat(i)}` }));
    const batches = [plain, wide].map((list) => journal.placeAll(list.map(({ id, p }): JournalRecord => ({ t: 'item', id, p, at: 1 }))));
    await Promise.all(batches.map((b) => b.durable));
    await journal.close();
    const text = new JournalText(path);
    [plain, wide].forEach((list, b) => list.forEach(({ p }, i) => assert.equal(text.read(batches[b]!.at!.offsets[i]!, batches[b]!.at!.lengths[i]!, 'p'), p)));
    text.close();
  });

  it('reads ahead the exact prompt of item lines whose id or prompt looks like the line\'s own keys', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { journal } = await openJournal(path);
    const tricky = [
      { id: 'a","p":"not this', p: 'ends like a line ","at":5}' },
      { id: '\\', p: '\\"' },
      { id: 'x', p: ',"p":"x","at":1}' },
      { id: 'ü 🌍', p: '' },
      { id: 'y', p: '\u0000 "at":  \n' },
    ];
    const batch = journal.placeAll([{ t: 'item', id: 'first', p: 'first', at: 1 }, ...tricky.map(({ id, p }): JournalRecord => ({ t: 'item', id, p, at: 2 }))]);
    await batch.durable;
    await journal.close();
    const text = new JournalText(path);
    const places = placesOf(batch.at);
    text.read(places[0]!.offset, places[0]!.length, 'p');
    assert.equal(text.read(places[1]!.offset, places[1]!.length, 'p'), tricky[0]!.p);
    // Read ahead with the second: the rest come from memory.
    truncateSync(path, 0);
    tricky.forEach(({ p }, i) => assert.equal(text.read(places[i + 1]!.offset, places[i + 1]!.length, 'p'), p));
    text.close();
    // Each by the prompt-alone parse, not by the whole line's fallback; a line of another shape is left to that.
    const line = (l: string) => Buffer.from(`${l}\n`);
    for (const { id, p } of tricky) assert.equal(itemPrompt(line(JSON.stringify({ t: 'item', id, p, at: 2 })), 0, Buffer.byteLength(JSON.stringify({ t: 'item', id, p, at: 2 }))), p);
    for (const other of ['{"t":"item","p":"x","id":"a","at":1}', '{"t":"item","id":"a","p":"x","at":1.5}', '{"t":"item","id":"a","p":"x"}']) assert.equal(itemPrompt(line(other), 0, other.length), undefined, other);
  });
});
