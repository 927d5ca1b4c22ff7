import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TargetSpec } from '../../src/core';
import { journalPath } from '../../src/core/journal/journal';
import { liveRunner } from '../../src/protocol/runnerFiles';
import type { StartParams } from '../../src/protocol/runnerProtocol';
import { cancelRun, startDetachedRun } from '../../src/protocol/runnerStart';
import { steerRun } from '../../src/protocol/steerClient';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { runnerStartParams, tempDir } from './helpers/runs';

const RUNNER = join(__dirname, '..', '..', '..', 'dist', 'runner.js');
const ENV = { PATH: process.env.PATH ?? '' };
// A target slow enough that a run is still going on while the test steers it.
const SLOW: TargetSpec = { type: 'command', command: 'sleep 0.3; cat' };

// A run started from outside a window (an agent's start_run): it must be told to its starter when it cannot run,
// and two at once must leave one run that pause and cancel still reach.
describe('a detached start: one run per evaluation, and a start that fails is told', function () {
  this.timeout(40_000);
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ port: 0, evaluationSeconds: 0 });
  });
  after(() => sandbox.close());

  const paramsFor = (stateDir: string, evaluationId: number, over: Partial<StartParams> = {}): StartParams =>
    runnerStartParams(sandbox, stateDir, { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId }, { spec: SLOW, secrets: {} }, { ...over, run: { concurrency: 1, servicePatienceMs: 60_000 } });

  it('two starts at once: one runs, the other is refused in words, and pause and cancel reach the one', async function () {
    if (process.platform === 'win32') this.skip();
    const stateDir = tempDir();
    const params = paramsFor(stateDir, 1);
    const journal = journalPath(stateDir, params.key);
    const both = await Promise.allSettled([startDetachedRun(RUNNER, journal, params, ENV), startDetachedRun(RUNNER, journal, params, ENV)]);
    const ran = both.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const refused = both.flatMap((s) => (s.status === 'rejected' ? [s.reason as Error] : []));
    assert.equal(ran.length, 1, `one start runs (${both.map((s) => s.status).join(', ')})`);
    assert.match(refused[0]!.message, /already running \(runner pid \d+\)/);
    try {
      assert.equal(liveRunner(journal)?.pid, ran[0]!.pid, "the run's runner file is there");
      assert.equal((await steerRun(journal, { action: 'pause' })).paused, true);
    } finally {
      // It lingers a moment after its end, then leaves by itself.
      await cancelRun(journal, true).catch(() => undefined);
    }
  });

  it('a start the service refuses (an unknown evaluation) comes back with how it ended, not as a run going on', async () => {
    const stateDir = tempDir();
    const params = paramsFor(stateDir, 999);
    const { state } = await startDetachedRun(RUNNER, journalPath(stateDir, params.key), params, ENV);
    assert.ok(state.finished, 'the run ended before its start was answered');
    assert.notEqual(state.finished.outcome, 'completed');
    assert.match(state.finished.message ?? '', /999/);
  });

  it('a run no window will give a token to (askForToken: false) ends on a refused token at once, as the CLI does', async () => {
    const stateDir = tempDir();
    const params = paramsFor(stateDir, 1, { token: 'not-the-token', askForToken: false });
    const { state } = await startDetachedRun(RUNNER, journalPath(stateDir, params.key), params, ENV);
    assert.equal(state.finished?.outcome, 'auth', 'it ended, refused, rather than wait for a window');
  });
});
