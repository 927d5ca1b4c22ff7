import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

interface StatusJson {
  counts: Record<string, number>;
  runs: Array<{ runId: string; target: string; startedAt: string; endedAt: string | null; mode?: string; answered: number; submitted: number; failed: number }>;
}

describe('runs with an identity: a new target never inherits old answers (CLI)', function () {
  this.timeout(60_000);
  const TRACES = 30;
  let sandbox: Sandbox;
  let stateDir: string;
  let env: Record<string, string>;
  const svc = () => ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  const echo = ['--target', 'echo'];
  const upper = ['--target', 'command', '--command', 'tr a-z A-Z'];
  const status = async () => JSON.parse((await cli(['status', ...svc(), '--json'], env)).stdout) as StatusJson;
  const prompts = seedPrompts('benchmark', TRACES);

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    stateDir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
  });
  afterEach(() => sandbox.close());

  it('refuses another target over submitted answers (exit 2, nothing sent), says who answered and the two ways on', async () => {
    assert.equal((await cli(['run', ...svc(), ...echo], env)).code, 0);
    const before = sandbox.stats.submissions;
    const r = await cli(['run', ...svc(), ...upper], env);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /The journaled answers of benchmark evaluation 1 came from another target:/);
    assert.match(r.stderr, /  echo in run \d{8}-\d{6}-[0-9a-f]{4} \(.+\): 30 trace\(s\), 30 submitted, 0 not yet/);
    assert.match(r.stderr, /You asked for: command: tr a-z A-Z\./);
    assert.match(r.stderr, /Nothing was done\. Choose how to go on:\n  --fresh .*\n  --reuse-answers /);
    assert.equal(sandbox.stats.submissions, before, 'nothing was submitted');
    assert.equal((await status()).runs.length, 1, 'a refused run leaves no record');
  });

  it('says plainly when the same target has nothing left to do (exit 0)', async () => {
    await cli(['run', ...svc(), ...echo], env);
    const { runs } = await status();
    const before = sandbox.stats.submissions;
    const r = await cli(['run', ...svc(), ...echo], env);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      r.stdout.includes(`Nothing to do: every trace is already submitted by echo in run ${runs[0]!.runId} at ${runs[0]!.startedAt} (the journal holds the whole list; the service was not asked); --fresh answers again.`),
      r.stdout,
    );
    assert.equal(sandbox.stats.submissions, before);
    assert.equal((await status()).runs.length, 1, 'a run with nothing to do leaves no record');
  });

  it('--fresh answers every trace again with the new target and resubmits; status lists both runs', async () => {
    await cli(['run', ...svc(), ...echo], env);
    const r = await cli(['run', ...svc(), ...upper, '--fresh'], env);
    assert.equal(r.code, 0, r.stderr);
    for (const p of prompts) assert.equal(sandbox.answerOf(1, p.traceId), p.content.toUpperCase().replace(/\r?\n$/, ''));
    const { runs } = await status();
    assert.deepEqual(
      runs.map((x) => [x.target, x.mode ?? 'continue', x.answered, x.submitted, x.failed]),
      [
        ['echo', 'continue', 30, 30, 0],
        ['command: tr a-z A-Z', 'fresh', 30, 30, 0],
      ],
    );
    assert.ok(runs.every((x) => x.endedAt !== null && x.endedAt >= x.startedAt));
    const text = await cli(['status', ...svc()], env);
    assert.match(text.stdout, /runs:\n  run +started +ended +answered +submitted +failed +target\n/);
    assert.match(text.stdout, /command: tr a-z A-Z \(fresh\)\n/);
  });

  it('--no-submit journals only; another target is refused; --reuse-answers submits them without calling it', async () => {
    const calls = `${tempDir()}/calls`;
    const counting = ['--target', 'command', '--command', `echo x >> '${calls}'; tr a-z A-Z`];
    const held = await cli(['run', ...svc(), ...echo, '--no-submit'], env);
    assert.equal(held.code, 0, held.stderr);
    assert.match(held.stdout, /--no-submit: 30 answer\(s\) journaled and not submitted/);
    assert.equal(sandbox.stats.submissions, 0);
    const refused = await cli(['run', ...svc(), ...counting], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /  echo in run .*: 30 trace\(s\), 0 submitted, 30 not yet/);
    const reused = await cli(['run', ...svc(), ...counting, '--reuse-answers'], env);
    assert.equal(reused.code, 0, reused.stderr);
    assert.equal(sandbox.stats.submissions, 30);
    for (const p of prompts) assert.equal(sandbox.answerOf(1, p.traceId), p.content, 'the journaled echo answers, as they were');
    assert.match(reused.stdout, / 0 target calls/);
    const { runs } = await status();
    assert.deepEqual(runs.map((x) => x.mode ?? 'continue'), ['continue', 'mixed']);
    // The same (new) target again: the journal's current target, nothing to refuse.
    assert.equal((await cli(['run', ...svc(), ...counting], env)).code, 0);
  });

  it('--limit N sends only the first N unanswered traces and says "N of M"; the next run goes on', async () => {
    const first = await cli(['run', ...svc(), ...echo, '--limit', '5'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /--limit 5: 5 of 30 trace\(s\) needing the target were sent; run again to go on\./);
    assert.equal(sandbox.stats.submissions, 5);
    for (const p of prompts.slice(0, 5)) assert.equal(sandbox.answerOf(1, p.traceId), p.content, 'the first five in list order');
    const rest = await cli(['run', ...svc(), ...echo], env);
    assert.equal(rest.code, 0);
    assert.equal(sandbox.stats.submissions, 30);
  });

  it('reads a journal written before runs had identities, and carries on under the new records', async () => {
    // Today's main wrote these records: a run with only a target description, a list, answers with prompts.
    const path = journalPath(stateDir, { origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1 });
    mkdirSync(dirname(path), { recursive: true });
    const lines: unknown[] = [
      { t: 'run', at: 1_700_000_000_000, origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1, target: 'echo' },
      { t: 'list', at: 1_700_000_000_100, total: TRACES },
    ];
    prompts.slice(0, 15).forEach((p, i) => {
      lines.push({ t: 'answer', id: p.traceId, p: p.content, a: `kept answer ${i}`, at: 1_700_000_001_000 + i, ms: 3 });
      if (i < 10) lines.push({ t: 'submitted', id: p.traceId, at: 1_700_000_002_000 + i, code: 'req_old' });
    });
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');

    const refused = await cli(['run', ...svc(), ...upper], env);
    assert.equal(refused.code, 2, 'an old run by another target is still another target');
    assert.match(refused.stderr, /  echo in run legacy-1 \(.+\): 15 trace\(s\), 10 submitted, 5 not yet/);

    const r = await cli(['run', ...svc(), ...echo], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(sandbox.stats.submissions, 20, 'the 5 journaled answers and the 15 unanswered traces');
    prompts.slice(10, 15).forEach((p, i) => assert.equal(sandbox.answerOf(1, p.traceId), `kept answer ${10 + i}`, 'not recomputed'));
    for (const p of prompts.slice(15)) assert.equal(sandbox.answerOf(1, p.traceId), p.content);
    const s = await status();
    assert.equal(s.counts.submitted, 30);
    assert.deepEqual(s.runs.map((x) => [x.runId.startsWith('legacy-') ? 'legacy' : 'new', x.target, x.answered, x.submitted]), [
      ['legacy', 'echo', 15, 10],
      ['new', 'echo', 15, 20],
    ]);
  });
});
