import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import { lockPathOf } from '../../src/core/journal/journalLock';
import { formatDuration, progressText } from '../../src/core/run/progressText';
import type { RunProgress } from '../../src/core/run/runState';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

const ORIGIN = 'http://127.0.0.1:9';

/** A journal with its prompts and one run that never wrote its end, as a killed process leaves it. */
function unendedRun(state: string, evaluationId: number): string {
  const journal = journalPath(state, { origin: ORIGIN, kind: 'benchmark', evaluationId });
  mkdirSync(dirname(journal), { recursive: true });
  const records = [
    { t: 'prompts', at: 1, items: ['a', 'b', 'c'].map((id) => ({ traceId: id, content: `p ${id}` })) },
    { t: 'run', at: 2, run: 'r-killed', fp: 'x', target: 'echo' },
    { t: 'answer', id: 'a', a: 'A', at: 3, run: 'r-killed' },
  ];
  writeFileSync(journal, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return journal;
}

/** A pid no process has any more: a child that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid;
}

describe('the CLI says what is true', () => {
  it('durations never read 60: rounded up to whole seconds before they are split', () => {
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(0.2), '1s');
    assert.equal(formatDuration(59), '59s');
    assert.equal(formatDuration(59.5), '1m00s');
    assert.equal(formatDuration(2819.5), '47m00s', '46m59.5s');
    assert.equal(formatDuration(2820), '47m00s');
    assert.equal(formatDuration(2821), '47m01s');
    assert.equal(formatDuration(3599.5), '1h00m');
    assert.equal(formatDuration(7500), '2h05m');
    assert.equal(formatDuration(undefined), '–');
  });

  it("the ETA is said against this run's share when that is not the whole list (--limit, --only, a resume)", () => {
    const progress: RunProgress = {
      phase: 'running',
      total: 20_000,
      counts: { pending: 19_000, running: 4, answered: 0, submitted: 996, failed: 0, skipped: 0 },
      ratePerSecond: 500,
      etaSeconds: 4,
      thisRun: { planned: 3000, finished: 1000 },
      elapsedMs: 2000,
      targetConcurrency: 4,
      lastError: undefined,
    };
    assert.match(progressText('benchmark 1', progress), /996\/20000 submitted .* ETA 4s for this run's 2000 left of 3000$/);
    const whole = progressText('benchmark 1', { ...progress, thisRun: { planned: 20_000, finished: 1000 } });
    assert.match(whole, /ETA 4s$/, 'the whole list: nothing to add');
  });

  it('a mistyped command gets "did you mean", on stderr, exit 2, as a mistyped flag does', async () => {
    const r = await cli(['stauts', '--evaluation', '1']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "stauts": did you mean status\?/);
    assert.equal(r.stdout, '');
    const far = await cli(['frobnicate']);
    assert.equal(far.code, 2);
    assert.doesNotMatch(far.stderr, /did you mean/);
  });

  it('status says "interrupted" for a run whose process is gone, "going on" while its lock is held', async () => {
    const state = tempDir();
    const journal = unendedRun(state, 1);
    writeFileSync(lockPathOf(journal), `${deadPid()}\n`);
    const args = ['status', '--base-url', ORIGIN, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', state];
    const text = await cli(args);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /r-killed\s+\S+ \S+\s+interrupted\s+1\s+0\s+0\s+echo/);
    const json = JSON.parse((await cli([...args, '--json'])).stdout) as { running: boolean; runs: Array<{ interrupted?: boolean; endedAt: null }> };
    assert.equal(json.running, false);
    assert.equal(json.runs[0]!.interrupted, true);
    // This test's own process holds the lock: the run is going on, not interrupted.
    writeFileSync(lockPathOf(journal), `${process.pid}\n`);
    const live = await cli(args);
    assert.match(live.stdout, /r-killed\s+\S+ \S+\s+going on/);
    assert.equal((JSON.parse((await cli([...args, '--json'])).stdout) as { runs: Array<{ interrupted?: boolean }> }).runs[0]!.interrupted, undefined);
  });
});

describe('eval-runner list', () => {
  it('lists every evaluation of the state folders: origin, kind, counts, last run, a run going on', async () => {
    const one = tempDir();
    const two = tempDir();
    writeFileSync(lockPathOf(unendedRun(one, 1)), `${deadPid()}\n`);
    writeFileSync(lockPathOf(unendedRun(two, 7)), `${process.pid}\n`);
    const text = await cli(['list', '--state-dir', one, '--state-dir', two]);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.equal(lines[0], `benchmark 1 at ${ORIGIN}: 3 trace(s), 0 submitted, 0 failed · 1 run(s), last r-killed (1970-01-01 00:00:00) interrupted`);
    assert.match(lines[1]!, /^benchmark 7 at http:\/\/127\.0\.0\.1:9: .* going on · a run is going on now$/);
    const json = JSON.parse((await cli(['list', '--state-dir', one, '--state-dir', two, '--json'])).stdout) as { evaluations: Array<Record<string, unknown>> };
    assert.deepEqual(
      json.evaluations.map((e) => [e.stateDir, e.origin, e.kind, e.evaluationId, e.traces, e.running, (e.lastRun as { outcome: string }).outcome]),
      [
        [one, ORIGIN, 'benchmark', 1, 3, false, 'interrupted'],
        [two, ORIGIN, 'benchmark', 7, 3, true, 'going on'],
      ],
    );
  });

  it('nothing there: exit 0, saying so and what to do', async () => {
    const empty = tempDir();
    const r = await cli(['list', '--state-dir', empty]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^No evaluation in .* yet\. Run one with "eval-runner run"/);
    assert.deepEqual(JSON.parse((await cli(['list', '--state-dir', empty, '--json'])).stdout), { evaluations: [] });
  });
});

describe('the fix-and-rerun loop, as a user types it', () => {
  it('3 traces fail; the same command retries them; after the fix the refusal leads to --only failed, which ends in exit 0', async function () {
    this.timeout(60_000);
    const sandbox = await startSandbox({ port: 0, generationSeconds: 0, evaluationSeconds: 0 });
    try {
      const dir = tempDir();
      const model = join(dir, 'model.py');
      writeFileSync(model, 'def answer(prompt, context):\n    if context["traceId"] in ("bench-0002", "bench-0003", "bench-0004"):\n        raise ValueError("not yet")\n    return "v1 " + context["traceId"]\n');
      const run = ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', join(dir, 'state'), '--target', 'python', '--python-file', model];
      const env = { EVAL_RUNNER_TOKEN: sandbox.token };
      const first = await cli(run, env);
      assert.equal(first.code, 1, first.stderr);
      assert.match(first.stdout, /3 trace\(s\) failed; run again to retry them/);
      const firstRun = /^ {2}(\S+) .*python: model\.py/m.exec((await cli(['status', ...run.slice(1, 9)])).stdout)?.[1];
      // "Run again to retry them", unchanged: a second run of the same target, which fails them again.
      assert.equal((await cli(run, env)).code, 1);
      writeFileSync(model, 'def answer(prompt, context):\n    return "v1 " + context["traceId"]\n');
      const refused = await cli(run, env);
      assert.equal(refused.code, 2);
      // The run the answers came from is named, not the retry that answered none of them.
      assert.match(refused.stderr, new RegExp(`in run ${firstRun} .*: 22 trace\\(s\\), 22 submitted`));
      assert.match(refused.stderr, new RegExp(`What differs from run ${firstRun}: `));
      const choices = refused.stderr.slice(refused.stderr.indexOf('Choose how to go on:'));
      assert.match(choices, /^Choose how to go on:\n {2}--only failed {4}rerun the 3 failed trace\(s\) with python: model\.py:answer @ \w+ as a new run.*\n {2}--fresh .*\n {2}--reuse-answers /);
      const rerun = await cli([...run, '--only', 'failed'], env);
      assert.equal(rerun.code, 0, rerun.stderr);
      assert.match(rerun.stdout, /Rerun of 3 failed trace\(s\): 3 submitted\./);
      assert.doesNotMatch(rerun.stdout, /trace\(s\) failed\./);
      for (const id of ['bench-0002', 'bench-0003', 'bench-0004']) assert.equal(sandbox.answerOf(1, id), `v1 ${id}`);
      const status = await cli(['status', ...run.slice(1, 9)]);
      assert.match(status.stdout, /benchmark evaluation 1: 25\/25 submitted/);
    } finally {
      await sandbox.close();
    }
  });
});
