import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createApiClient } from '../../src/api/client';
import { journalPath, readJournal } from '../../src/core/journal/journal';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { EvaluationSession } from '../../src/core/session/session';
import { sessionId } from '../../src/core/session/storeSync';
import { readIndex } from '../../src/core/store/storeIndex';
import { TraceStore } from '../../src/core/store/traceStore';
import { startSandbox } from '../../src/sandbox/server';
import { tempDir } from './helpers/runs';
import { FAST_RETRY } from './helpers/servers';

const KEY = { origin: 'http://127.0.0.1:9', kind: 'benchmark' as const, evaluationId: 1 };
// Text a reader must give back exactly: multi-byte characters, a NUL, CRLF, and 200 KB.
const TRICKY = ['Traduis : « Bonjour » 🌍 مرحبا', 'nul\u0000byte', 'line\r\nbreak', 'x'.repeat(200_000) + '€'];

function seed(stateDir: string, traces: number): string {
  const path = journalPath(stateDir, KEY);
  mkdirSync(dirname(path), { recursive: true });
  const items = Array.from({ length: traces }, (_, i) => ({ traceId: `t${i}`, content: TRICKY[i % TRICKY.length]! }));
  const lines: JournalRecord[] = [{ t: 'prompts', at: 1, items }, { t: 'run', at: 2, run: 'r1', target: 'echo' }];
  for (const { traceId, content } of items) lines.push({ t: 'answer', id: traceId, a: content, at: 3, ms: 1, run: 'r1' });
  writeFileSync(path, lines.map((r) => `${JSON.stringify(r)}\n`).join(''), { mode: 0o600 });
  return path;
}

/** The store a reader that read the whole journal now would build. */
async function fresh(path: string): Promise<TraceStore> {
  return TraceStore.fromRecords((await readJournal(path)).records);
}

/** What a trace shows (its texts read back wherever the store keeps them). */
function shown(store: TraceStore) {
  return [...store.traces.values()].map((t) => ({ ...(t as unknown as { toJSON(): object }).toJSON(), prompt: t.prompt, answer: t.answer }));
}

function sameTraces(a: TraceStore, b: TraceStore): void {
  assert.deepEqual(shown(a), shown(b));
  assert.deepEqual(a.counts, b.counts);
}

describe('one live store: the journal is read on from its last byte, never replayed for an action', function () {
  this.timeout(60_000);

  it('reads on after another writer appends: the same store object, the new records applied, text back exactly', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 8);
    const reader = new EvaluationSession(KEY, stateDir);
    await reader.load();
    const store = reader.store;
    const writer = new EvaluationSession(KEY, stateDir);
    await writer.setVerdict('t1', 'bad', 'wrong language');
    await writer.skip('t2', 'not for this model');
    await reader.load();
    assert.equal(reader.store, store, 'the store was kept, not rebuilt');
    assert.equal(reader.store.get('t1')!.rating, 'bad');
    assert.equal(reader.store.get('t2')!.state, 'skipped');
    sameTraces(reader.store, await fresh(path));
    for (let i = 0; i < 8; i++) assert.equal(reader.store.get(`t${i}`)!.answer, TRICKY[i % TRICKY.length]);
  });

  it("an action of its own reads only what others appended, and goes on after its own records", async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 4);
    const a = new EvaluationSession(KEY, stateDir);
    const b = new EvaluationSession(KEY, stateDir);
    await a.load();
    await b.setVerdict('t0', 'good', undefined);
    const store = a.store;
    await a.setVerdict('t3', 'bad', 'too long');
    assert.equal(a.store, store);
    assert.equal(a.store.get('t0')!.rating, 'good', "the other writer's verdict was read on the way");
    await b.setVerdict('t1', 'good', undefined);
    await a.load();
    assert.equal(a.store, store);
    sameTraces(a.store, await fresh(path));
  });

  it('a line still being written is left for the next read; a journal begun again is read whole', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 2);
    const reader = new EvaluationSession(KEY, stateDir);
    await reader.load();
    const line = `${JSON.stringify({ t: 'verdict', id: 't0', at: 9, rating: 'bad', note: 'é🌍' })}\n`;
    const bytes = Buffer.from(line);
    // Cut inside the emoji's four bytes: the reader must not take half a character, nor half a record.
    const cut = bytes.indexOf(Buffer.from('🌍')) + 2;
    appendFileSync(path, bytes.subarray(0, cut));
    await reader.load();
    assert.equal(reader.store.get('t0')!.rating, undefined);
    appendFileSync(path, bytes.subarray(cut));
    await reader.load();
    assert.equal(reader.store.get('t0')!.note, 'é🌍');
    rmSync(path);
    seed(stateDir, 3);
    const before = reader.store;
    await reader.load();
    assert.notEqual(reader.store, before, 'another file: read whole');
    assert.equal(reader.store.traces.size, 3);
    assert.equal(reader.store.get('t0')!.rating, undefined);
  });

  it('two processes appending while a third reads on: the reader ends with what a whole read gives', async () => {
    const stateDir = tempDir();
    const path = seed(stateDir, 20);
    const reader = new EvaluationSession(KEY, stateDir);
    await reader.load();
    const session = join(__dirname, '..', '..', 'src', 'core', 'session', 'session.js');
    const writer = (offset: number) =>
      new Promise<number | null>((resolve) => {
        const script = `const { EvaluationSession } = require(${JSON.stringify(session)});
          (async () => { const s = new EvaluationSession(${JSON.stringify(KEY)}, ${JSON.stringify(stateDir)});
            for (let i = 0; i < 40; i++) { for (;;) { try { await s.setVerdict('t' + ((i + ${offset}) % 20), i % 2 ? 'good' : 'bad', 'n' + i); break; } catch { await new Promise((r) => setTimeout(r, 5)); } } } })();`;
        spawn(process.execPath, ['-e', script], { stdio: 'inherit' }).on('close', resolve);
      });
    const writers = Promise.all([writer(0), writer(7)]);
    let done = false;
    void writers.then(() => (done = true));
    let reads = 0;
    while (!done) {
      await reader.load();
      reads++;
      await new Promise((r) => setTimeout(r, 3));
    }
    assert.deepEqual(await writers, [0, 0]);
    await reader.load();
    assert.ok(reads > 1, 'the reader read on while they wrote');
    sameTraces(reader.store, await fresh(path));
  });

  it('reads asked for at once (a window opening while its watcher looks) are taken in turn: no half-built or empty store', async () => {
    const stateDir = tempDir();
    // Small enough to have no index: both reads are whole ones.
    const path = seed(stateDir, 3);
    const reader = new EvaluationSession(KEY, stateDir);
    const writer = new EvaluationSession(KEY, stateDir);
    await writer.setVerdict('t0', 'good', undefined);
    await Promise.all([reader.load(), reader.load(), reader.load(), reader.setVerdict('t2', 'bad', 'x')]);
    assert.equal(reader.store.total, 3);
    assert.equal(reader.store.get('t0')!.rating, 'good');
    assert.equal(reader.store.get('t2')!.rating, 'bad');
    sameTraces(reader.store, await fresh(path));
  });

  it("takes the prompts a version before 0.2 kept beside the journal, whichever read comes first", async () => {
    const stateDir = tempDir();
    const path = journalPath(stateDir, KEY);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify({ t: 'answer', id: 'a', a: 'A', at: 3 })}\n`);
    writeFileSync(path.replace(/\.jsonl$/, '.prompts.json'), JSON.stringify([{ traceId: 'a', content: 'qa' }, { traceId: 'b', content: 'qb' }]));
    const reader = new EvaluationSession(KEY, stateDir);
    await Promise.all([reader.load(), reader.load()]);
    assert.deepEqual([...reader.store.traces.values()].map((t) => [t.traceId, t.state, t.prompt]), [['a', 'answered', 'qa'], ['b', 'pending', 'qb']]);
  });

  it('a run followed in another process: its journal read without writing the index, then read from the index its end left', async () => {
    const stateDir = tempDir();
    // 24 traces, a fifth of them 200 KB: a journal of about 2.4 MB, one worth an index.
    const path = seed(stateDir, 24);
    const answers = (run: string) => {
      const lines = [{ t: 'run', at: 4, run, target: 'echo' }, ...Array.from({ length: 24 }, (_, i) => ({ t: 'answer', id: `t${i}`, a: `${run} ${TRICKY[i % TRICKY.length]!}`, at: 5, ms: 1, run }))];
      appendFileSync(path, lines.map((r) => `${JSON.stringify(r)}\n`).join(''));
    };
    const reader = new EvaluationSession(KEY, stateDir);
    await reader.load();
    const indexed = await readIndex(path, sessionId(KEY));
    assert.equal(indexed?.position.bytes, statSync(path).size, 'a reader that follows no run keeps the index');
    const followed = reader.follow({ cancel: () => undefined });
    // The run's writer appends a run of answers (past the growth at which a reader rewrites the index): read, not indexed.
    answers('r2');
    await reader.load();
    assert.equal(reader.store.get('t0')!.answer, `r2 ${TRICKY[0]!}`, 'the followed run was read');
    assert.equal((await readIndex(path, sessionId(KEY)))?.position.bytes, indexed.position.bytes, 'the follower left the index as it was');
    // Then the run appends more and ends, writing the index itself (as the runner's end does).
    answers('r3');
    answers('r4');
    await new EvaluationSession(KEY, stateDir).load();
    const store = reader.store;
    await reader.loadAfterRun();
    followed.end(undefined);
    assert.notEqual(reader.store, store, "the store is the index's, not the run's records read on");
    sameTraces(reader.store, await fresh(path));
    assert.equal(reader.store.get('t5')!.answer, `r4 ${TRICKY[1]!}`);
  });

  it('a read asked for while Fetch Prompts waits for generation does not wait for it (the fetch holds the lock: nothing to read)', async () => {
    const sandbox = await startSandbox({ port: 0, generationSeconds: 2 });
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, retry: FAST_RETRY });
    try {
      const session = new EvaluationSession({ origin: new URL(sandbox.baseUrl).origin, kind: 'robustness', evaluationId: 2 }, tempDir());
      let waited = 0;
      const fetching = session.fetchPrompts(client, { waitForGenerationMs: 20_000, onWait: () => waited++ });
      let fetched = false;
      void fetching.then(() => (fetched = true));
      while (waited === 0) await new Promise((r) => setTimeout(r, 20));
      await session.load();
      assert.equal(fetched, false, 'the read came back while the fetch was still waiting');
      assert.ok((await fetching) > 0);
      await session.load();
      assert.equal(session.store.total, await fetching);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});
