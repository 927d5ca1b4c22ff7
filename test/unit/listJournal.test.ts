import assert from 'node:assert/strict';
import { readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { openJournal, readJournal } from '../../src/core/journal/journal';
import type { RecordLocation } from '../../src/core/journal/journal';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { JournalText } from '../../src/core/journal/journalText';
import { JournalWriteError, ListWriter } from '../../src/core/store/listWriter';
import { TraceStore } from '../../src/core/store/traceStore';
import { faultyFs } from './helpers/faultyFs';
import { tempDir } from './helpers/runs';

const items = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ traceId: `t${from + i}`, content: `prompt ${from + i} ü "quoted" \\ 🌍` }));

describe('the prompt list in the journal', () => {
  it('places a batch of records as one write, each where its line is, in order with single records', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { fs, state } = faultyFs(() => false);
    const { journal } = await openJournal(path, { fs });
    const first = journal.place({ t: 'run', at: 1, run: 'r1' });
    const batch = journal.placeAll(items(300).map(({ traceId, content }) => ({ t: 'item', id: traceId, p: content, at: 2 })));
    const last = journal.place({ t: 'list', at: 3, total: 300, full: true });
    await Promise.all([first.durable, batch.durable, last.durable]);
    await journal.close();
    assert.ok(state.writes <= 3, `${state.writes} writes`);
    const seen: RecordLocation[] = [];
    await readJournal(path, undefined, () => (_record: JournalRecord, at: RecordLocation) => void seen.push(at));
    assert.deepEqual(seen, [first.at, ...batch.at, last.at]);
    const file = readFileSync(path);
    assert.deepEqual(JSON.parse(file.subarray(batch.at[299]!.offset, batch.at[299]!.offset + batch.at[299]!.length).toString()), { t: 'item', id: 't299', p: items(300)[299]!.content, at: 2 });
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

  it('a batch that cannot be written fails the list, its prompts still held by the store', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    const { fs } = faultyFs((kind, text) => kind === 'journal' && text.includes('"t":"item"'));
    const { journal } = await openJournal(path, { fs });
    const store = new TraceStore().readFrom(new JournalText(path));
    const list = new ListWriter(store, journal, () => undefined);
    await assert.rejects(list.add(items(600)), JournalWriteError);
    assert.equal(store.get('t5')!.prompt, items(6)[5]!.content);
    await journal.close();
  });
});
