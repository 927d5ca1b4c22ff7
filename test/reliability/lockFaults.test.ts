import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createApiClient } from '../../src/api/client';
import { journalPath, openJournal } from '../../src/core/journal/journal';
import { journalHeld, journalLockPid } from '../../src/core/journal/journalLock';
import { EvaluationSession } from '../../src/core/session/session';
import { NODE_FS, StorageError } from '../../src/core/journal/storage';
import type { JournalFs } from '../../src/core/journal/storage';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { scriptedTarget, tempDir } from '../unit/helpers/runs';
import { FAST_RETRY } from '../unit/helpers/servers';

// A pid no process has (above Linux's pid_max): the lock it names is stale, so taking it over reads the lock file.
const DEAD_PID = '2147483646';

function eio(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`EIO: i/o error, read '${path}'`), { code: 'EIO', errno: -5, syscall: 'read', path });
}

/** Node's file operations, except that reading a lock file fails with EIO (a failing disk); counts those reads. */
function lockReadsFail(): { fs: JournalFs; reads: string[] } {
  const reads: string[] = [];
  const failing = (path: string) => /\.lock(\.takeover)?$/.test(path);
  const fs: JournalFs = {
    ...NODE_FS,
    readFile: (path) => {
      if (!failing(path)) return NODE_FS.readFile(path);
      reads.push(path);
      return Promise.reject(eio(path));
    },
    readFileSync: (path) => {
      if (!failing(path)) return NODE_FS.readFileSync(path);
      reads.push(path);
      throw eio(path);
    },
  };
  return { fs, reads };
}

describe("the journal's lock reads through the journal's file layer: a failing read is a storage error, not a crash", function () {
  this.timeout(30_000);
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 20, generationSeconds: 0, evaluationSeconds: 0 });
  });
  after(() => sandbox.close());

  it('openJournal: EIO reading a stale lock is a StorageError in words, the lock left as it was, and a later open takes it over', async () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.lock`, DEAD_PID);
    const { fs, reads } = lockReadsFail();
    const error = await openJournal(path, { fs }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(reads.length > 0, 'the lock file was read through the layer');
    assert.ok(error instanceof StorageError, String(error));
    assert.equal(error.code, 'EIO');
    assert.match(error.message, /reported an input\/output error \(EIO\): check the disk, then run again/);
    assert.doesNotMatch(error.message, /\n\s+at |node:internal/);
    assert.equal(readFileSync(`${path}.lock`, 'utf8'), DEAD_PID, 'the stale lock is not taken over blindly');
    // The disk is well again: the same process may open it (the failed attempt holds nothing).
    const { journal } = await openJournal(path);
    assert.equal(readFileSync(`${path}.lock`, 'utf8'), String(process.pid));
    await journal.close();
  });

  it('a run whose lock cannot be read stops with the storage error, nothing submitted; the next run completes', async () => {
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const path = journalPath(stateDir, key);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.lock`, DEAD_PID);
    const before = sandbox.stats.submissions;
    const run = async (fs: JournalFs | undefined) => {
      const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, retry: FAST_RETRY });
      const session = new EvaluationSession(key, stateDir, true, fs);
      try {
        return await session.run({ client, target: scriptedTarget((p) => `answer to ${p.length}`), identity: { description: 'scripted', fingerprint: 'test:scripted', facts: {} }, concurrency: 4 });
      } finally {
        await client.close();
      }
    };
    const thrown = await run(lockReadsFail().fs).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(thrown instanceof StorageError, String(thrown));
    assert.equal(sandbox.stats.submissions, before, 'nothing submitted without a journal');
    const result = await run(undefined);
    assert.ok(result && 'outcome' in result && result.outcome === 'completed', JSON.stringify(result));
  });

  it("a window's quick look at the lock (held? which pid?) says no when the read fails, and never throws", () => {
    const path = join(tempDir(), 'benchmark-1.jsonl');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.lock`, String(process.pid));
    assert.equal(journalHeld(path), true);
    assert.equal(journalLockPid(path), process.pid);
    const { fs, reads } = lockReadsFail();
    assert.equal(journalHeld(path, fs), false);
    assert.equal(journalLockPid(path, fs), undefined);
    assert.equal(reads.length, 2);
  });
});
