import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import type { JournalKey } from '../../src/core/journal/journal';
import { INDEX_MIN_GROWTH, sessionId } from '../../src/core/session/storeSync';
import { readIndex } from '../../src/core/store/storeIndex';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

// 600 prompts of 2 KB: a journal of about 2.5 MB, past the size from which the index is kept.
const TRACES = 600;

describe('every run leaves the index current when it ends, so the first reader after it reads no journal', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let key: JournalKey;
  const svc = () => ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark'];
  const env = () => ({ EVAL_RUNNER_TOKEN: sandbox.token });

  before(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, promptBytes: 2048, evaluationSeconds: 0 });
    key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 };
  });
  after(() => sandbox.close());

  /** The index beside the journal was written for the journal as it is now: its position is the file's length. */
  async function assertCurrent(stateDir: string, what: string): Promise<void> {
    const journal = journalPath(stateDir, key);
    const size = statSync(journal).size;
    assert.ok(size > INDEX_MIN_GROWTH, `${what}: the journal (${size} bytes) is one worth an index`);
    const index = await readIndex(journal, sessionId(key));
    assert.ok(index, `${what}: an index of this version beside the journal`);
    assert.equal(index.position.bytes, size, `${what}: the index is of the whole journal`);
    assert.equal(index.image.traces.id.length, TRACES, `${what}: every trace in it`);
  }

  it('a complete run of a new journal, and a shard', async () => {
    const whole = tempDir();
    const r = await cli(['run', ...svc(), '--target', 'echo', '--state-dir', whole], env());
    assert.equal(r.code, 0, r.stderr);
    await assertCurrent(whole, 'complete');

    const shard = tempDir();
    const s = await cli(['run', ...svc(), '--target', 'echo', '--shard', '1/2', '--state-dir', shard], env());
    assert.equal(s.code, 0, s.stderr);
    await assertCurrent(shard, 'shard');
  });

  it('a cancelled run', async () => {
    const stateDir = tempDir();
    const calls = join(stateDir, 'calls.log');
    const args = ['run', ...svc(), '--target', 'command', '--command', `echo x >> ${calls}; sleep 0.1; cat`, '--concurrency', '2', '--state-dir', stateDir];
    // Ctrl-C once the target has been called: the list is journaled by then.
    const r = await cli(args, env(), (child) => {
      const poll = setInterval(() => {
        if (!existsSync(calls)) return;
        clearInterval(poll);
        child.kill('SIGINT');
      }, 20);
      child.once('exit', () => clearInterval(poll));
    });
    assert.equal(r.code, 130, r.stderr);
    await assertCurrent(stateDir, 'cancelled');
  });

  it('a run whose every trace fails at once, after a complete one (a few bytes more)', async () => {
    const stateDir = tempDir();
    assert.equal((await cli(['run', ...svc(), '--target', 'echo', '--state-dir', stateDir], env())).code, 0);
    // A reader in between: the index is current before the failed run, whichever wrote it.
    assert.equal((await cli(['status', ...svc(), '--state-dir', stateDir], env())).code, 0);
    const before = statSync(journalPath(stateDir, key)).size;
    const r = await cli(['run', ...svc(), '--fresh', '--target', 'command', '--command', join(stateDir, 'no-such-command'), '--target-retries', '0', '--limit', '20', '--no-submit', '--state-dir', stateDir], env());
    assert.notEqual(r.code, 0, 'the run failed');
    const grown = statSync(journalPath(stateDir, key)).size - before;
    assert.ok(grown > 0 && grown < INDEX_MIN_GROWTH, `the failed run wrote a little (${grown} bytes)`);
    await assertCurrent(stateDir, 'failed at once');
  });
});
