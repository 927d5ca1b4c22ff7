import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { readFileSync } from 'node:fs';
import { createApiClient } from '../../src/api/client';
import { executeRun } from '../../src/cli/runCommand';
import { EXIT } from '../../src/cli/exitCodes';
import { journalPath, parseJournal } from '../../src/core/journal/journal';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { EvaluationSession } from '../../src/core/session/session';
import type { RunSummary } from '../../src/core/run/engine';
import { StorageError, asStorageError } from '../../src/core/journal/storage';
import type { JournalFs } from '../../src/core/journal/storage';
import { createTarget, targetIdentity } from '../../src/core/targets/targetSpec';
import { runOptions } from '../../src/core/options/runOptions';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { atNth, faultyFs } from '../unit/helpers/faultyFs';
import type { WriteKind } from '../unit/helpers/faultyFs';
import { scriptedTarget, tempDir } from '../unit/helpers/runs';
import { FAST_RETRY } from '../unit/helpers/servers';

const TRACES = 300;

/** One run of the benchmark evaluation through the core session, its journal written through `fs`. */
async function runWith(sandbox: Sandbox, stateDir: string, fs: JournalFs | undefined, target = scriptedTarget((p) => `answer to ${p.length}`)) {
  const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, retry: FAST_RETRY });
  const session = new EvaluationSession({ origin: client.origin, kind: 'benchmark', evaluationId: 1 }, stateDir, true, fs);
  try {
    const result = await session.run({ client, target, identity: { description: 'scripted', fingerprint: 'test:scripted', facts: {} }, concurrency: 16 });
    return { result: result as RunSummary, session, target };
  } finally {
    await client.close();
  }
}

function journalRecords(sandbox: Sandbox, stateDir: string): JournalRecord[] {
  const path = journalPath(stateDir, { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 });
  try {
    return parseJournal(readFileSync(path, 'utf8')).records;
  } catch {
    return [];
  }
}

/** Every answer the service holds was journaled before it was submitted. */
function assertNothingSubmittedUnjournaled(sandbox: Sandbox, stateDir: string, ids: readonly string[]): void {
  const journaled = new Set(journalRecords(sandbox, stateDir).filter((r) => r.t === 'answer').map((r) => (r as { id: string }).id));
  for (const id of ids) {
    if (sandbox.answerOf(1, id) !== undefined) assert.ok(journaled.has(id), `trace ${id} was submitted without a journaled answer`);
  }
}

const CASES: Array<{ name: string; fails: () => (kind: WriteKind, text: string) => boolean }> = [
  { name: 'at the prompt list', fails: () => (kind, text) => kind === 'journal' && text.includes('{"t":"item"') },
  { name: 'at the 40th answer', fails: () => atNth('answer', 40) },
  { name: 'at the 25th submitted record', fails: () => atNth('submitted', 25) },
  { name: 'at the lock', fails: () => (kind) => kind === 'lock' },
];

describe('a full disk under the state folder: the run stops at once, in words, and a rerun finishes', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, generationSeconds: 0, evaluationSeconds: 0 });
  });
  afterEach(() => sandbox.close());

  for (const c of CASES) {
    it(`${c.name}: outcome "storage" naming the folder, nothing submitted unjournaled, then resumed`, async () => {
      const stateDir = tempDir();
      const { fs, state } = faultyFs(c.fails());
      let summary: RunSummary | undefined;
      let thrown: unknown;
      try {
        summary = (await runWith(sandbox, stateDir, fs)).result;
      } catch (error) {
        thrown = error;
      }
      assert.ok(state.failedWrites > 0, 'the fault was hit');
      const message = summary?.message ?? (thrown as Error | undefined)?.message ?? '';
      if (c.name === 'at the lock') assert.ok(thrown instanceof StorageError, String(thrown));
      else assert.equal(summary?.outcome, 'storage', message);
      assert.match(message, /The disk holding .* is full: free some space and run again/);
      assert.ok(message.includes(stateDir.replace(/^.*\/(eval-runner-test-[^/]+)$/, '$1')), `names the folder: ${message}`);
      assert.doesNotMatch(message, /\n\s+at |node:internal|unexpectedly/);
      // The run stopped at once: far fewer submissions than traces when the fault came early.
      if (c.name !== 'at the 25th submitted record') assert.ok(sandbox.stats.submissions < TRACES / 2, `${sandbox.stats.submissions} submitted`);
      const ids = (journalRecords(sandbox, stateDir).find((r) => r.t === 'prompts') as { items: Array<{ traceId: string }> } | undefined)?.items.map((i) => i.traceId) ?? [];
      assertNothingSubmittedUnjournaled(sandbox, stateDir, ids);

      // Space freed: the same command resumes and finishes; journaled answers are not recomputed.
      const { result, target } = await runWith(sandbox, stateDir, undefined);
      assert.equal(result.outcome, 'completed', result.message);
      assert.equal(result.counts.submitted, TRACES);
      assert.ok(target.total() <= TRACES, 'each trace called at most once after the rerun');
    });
  }

  it('the CLI: exit 5 and the same words, no stack trace; the next run resumes', async () => {
    const stateDir = tempDir();
    const { fs } = faultyFs(atNth('answer', 10));
    const run = async (journalFs: JournalFs | undefined) => {
      const out = new PassThrough();
      const err = new PassThrough();
      let text = '';
      out.on('data', (c: Buffer) => (text += c.toString()));
      err.on('data', (c: Buffer) => (text += c.toString()));
      const echo = { type: 'echo' } as const;
      const { code } = await executeRun(
        {
          args: { baseUrl: sandbox.baseUrl, evaluationId: 1, kind: 'benchmark' },
          token: sandbox.token,
          target: createTarget(echo, {}, { connections: 8 }),
          identity: targetIdentity(echo),
          ...runOptions({ targetTimeoutSeconds: 10, waitForGenerationSeconds: 0 }),
          stateDir,
          encoding: 'urlencoded',
          journal: true,
          json: false,
          label: 'benchmark 1',
          ...(journalFs ? { journalFs } : {}),
        },
        { stdout: out, stderr: err as unknown as NodeJS.WriteStream },
      );
      return { code, text };
    };
    const first = await run(fs);
    assert.equal(first.code, EXIT.storage, first.text);
    assert.match(first.text, /The disk holding .* is full: free some space and run again/);
    assert.doesNotMatch(first.text, /\n\s+at |node:internal|ENOSPC: no space/);
    const second = await run(undefined);
    assert.equal(second.code, EXIT.ok, second.text);
    assert.match(second.text, new RegExp(`${TRACES}/${TRACES} submitted`));
  });

  it('each unwritable folder is said in its own words', () => {
    const said = (code: string) => (asStorageError(Object.assign(new Error(code), { code }), '/data/state/host/benchmark-1.jsonl')).message;
    assert.match(said('ENOSPC'), /^The disk holding \/data\/state is full/);
    assert.match(said('EDQUOT'), /disk quota for \/data\/state is used up/);
    assert.match(said('EROFS'), /\/data\/state is on a read-only file system: choose a writable state folder \(--state-dir/);
    assert.match(said('EACCES'), /may not write in \/data\/state: fix its permissions/);
    assert.match(said('EIO'), /input\/output error \(EIO\)/);
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EIO']) assert.match(said(code), /every answer journaled before it is kept/);
    const other = Object.assign(new Error('x'), { code: 'ENOENT' });
    assert.equal(asStorageError(other, '/x/y/z'), other, 'other errors are not a full disk');
  });
});
