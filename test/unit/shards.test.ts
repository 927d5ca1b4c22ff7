import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatShard, inShard, parseShard, traceHash } from '../../src/core/run/shards';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

// Ids as services write them, and as they should not but may: the sandbox's tricky seed set, empty-ish,
// non-ASCII, very long.
const IDS = [
  ...seedPrompts('benchmark', 300).map((p) => p.traceId),
  ...seedPrompts('robustness', 300).map((p) => p.traceId),
  ' ',
  'trace é ü 日本',
  '🧪'.repeat(50),
  'x'.repeat(10_000),
];

describe('shards: run --shard K/N, and the shards read as one', () => {
  it('hashes trace ids with FNV-1a over UTF-8: pinned, so the split is the same on every machine and version', () => {
    assert.equal(traceHash(''), 0x811c9dc5);
    assert.equal(traceHash('a'), 0xe40c292c);
    assert.equal(traceHash('foobar'), 0xbf9cf968);
    assert.equal(traceHash('trace é ü 日本'), 0xbeccd0b7);
  });

  it('splits any list into disjoint shards that together hold every trace, for N from 1 to 8', () => {
    for (let count = 1; count <= 8; count++) {
      const owners = IDS.map((id) => Array.from({ length: count }, (_, k) => k + 1).filter((index) => inShard(id, { index, count })));
      assert.ok(owners.every((o) => o.length === 1), `N=${count}: every trace in exactly one shard`);
      const sizes = Array.from({ length: count }, (_, k) => owners.filter((o) => o[0] === k + 1).length);
      // Even enough to be worth a machine each: no shard under half its share of 604 ids.
      assert.ok(Math.min(...sizes) > IDS.length / count / 2, `N=${count}: shard sizes ${sizes.join(', ')}`);
    }
  });

  it('reads K/N and refuses what is not a shard', () => {
    assert.deepEqual(parseShard('2/4'), { index: 2, count: 4 });
    assert.equal(formatShard(parseShard(' 1 / 1 ')), '1/1');
    for (const bad of ['0/4', '5/4', '1/0', '4', '1/2/3', 'a/b', '-1/4', '1/1001']) assert.throws(() => parseShard(bad), /K\/N/, bad);
  });

  describe('against the sandbox, through the CLI', function () {
    this.timeout(60_000);
    let sandbox: Sandbox;
    let single: Sandbox;
    const TRACES = 200;
    const svc = (s: Sandbox) => ['--base-url', s.baseUrl, '--evaluation', '1', '--kind', 'benchmark'];
    const env = (s: Sandbox) => ({ EVAL_RUNNER_TOKEN: s.token });

    before(async () => {
      sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
      single = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    });
    after(async () => {
      await sandbox.close();
      await single.close();
    });

    it('four shards in parallel submit every trace exactly once; merged status and export equal a single run', async () => {
      const dirs = [1, 2, 3, 4].map((k) => tempDir(`eval-runner-shard-${k}-`));
      const runs = await Promise.all(dirs.map((dir, k) => cli(['run', ...svc(sandbox), '--target', 'echo', '--shard', `${k + 1}/4`, '--state-dir', dir], env(sandbox))));
      for (const r of runs) assert.equal(r.code, 0, r.stdout + r.stderr);
      const ids = seedPrompts('benchmark', TRACES).map((p) => p.traceId);
      assert.deepEqual(ids.filter((id) => sandbox.submissionsOf(1, id) !== 1), [], 'each trace submitted once, by one shard');
      assert.equal(sandbox.stats.submissions, TRACES);

      const one = tempDir('eval-runner-single-');
      assert.equal((await cli(['run', ...svc(single), '--target', 'echo', '--state-dir', one], env(single))).code, 0);
      // The same evaluation, read from the four folders at once and from the single run's folder.
      const merged = (s: Sandbox, folders: string[], command: string[]) => cli([...command, ...svc(s), ...folders.flatMap((d) => ['--state-dir', d])]);
      const status = JSON.parse((await merged(sandbox, dirs, ['status', '--json'])).stdout) as Status;
      const alone = JSON.parse((await merged(single, [one], ['status', '--json'])).stdout) as Status;
      assert.deepEqual({ total: status.total, counts: status.counts, failed: status.failed, notAnswered: status.notAnswered }, { total: alone.total, counts: alone.counts, failed: alone.failed, notAnswered: alone.notAnswered });
      assert.equal(status.journals?.length, 4);
      assert.deepEqual(status.notDone, []);
      assert.deepEqual(status.runs.map((r) => r.shard).sort(), ['1/4', '2/4', '3/4', '4/4']);
      const rows = async (s: Sandbox, folders: string[]) =>
        (await merged(s, folders, ['export', '--format', 'jsonl'])).stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .map(({ traceId, prompt, answer, state, errorAnswer, target, rating, note, error, notAnswered }) => ({ traceId, prompt, answer, state, errorAnswer, target, rating, note, error, notAnswered }));
      assert.deepEqual(await rows(sandbox, dirs), await rows(single, [one]));

      // One report of the four: every trace; written owner-only even over a file anyone could read.
      const out = join(tempDir('eval-runner-report-'), 'report.html');
      writeFileSync(out, 'old', { mode: 0o644 });
      chmodSync(out, 0o644);
      assert.equal((await merged(sandbox, dirs, ['report', '--out', out])).code, 0);
      assert.equal(statSync(out).mode & 0o077, 0);
      const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(readFileSync(out, 'utf8'))![1]!) as { rows: string[][]; runs: unknown[] };
      assert.equal(data.rows.length, TRACES);
      assert.equal(data.runs.length, 4);
    });

    it('lists what no shard has done when shards are missing', async () => {
      const s = await startSandbox({ port: 0, benchmarkTraces: 40, evaluationSeconds: 0 });
      try {
        const dirs = [tempDir('eval-runner-shard-a-'), tempDir('eval-runner-shard-b-')];
        await cli(['run', ...svc(s), '--target', 'echo', '--shard', '1/3', '--state-dir', dirs[0]!], env(s));
        await cli(['run', ...svc(s), '--target', 'echo', '--shard', '3/3', '--state-dir', dirs[1]!], env(s));
        const text = await cli(['status', ...svc(s), '--state-dir', dirs[0]!, '--state-dir', dirs[1]!]);
        const missing = seedPrompts('benchmark', 40).filter((p) => inShard(p.traceId, { index: 2, count: 3 }));
        assert.match(text.stdout, new RegExp(`not done by any of them: ${missing.length} trace\\(s\\), first ${JSON.stringify(missing[0]!.traceId).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
        const json = JSON.parse((await cli(['status', ...svc(s), '--state-dir', dirs[0]!, '--state-dir', dirs[1]!, '--json'])).stdout) as Status;
        assert.deepEqual(json.notDone, missing.map((p) => p.traceId));
      } finally {
        await s.close();
      }
    });
  });
});

interface Status {
  total: number;
  counts: Record<string, number>;
  failed: unknown[];
  notAnswered: number;
  journals?: string[];
  notDone?: string[];
  runs: Array<{ shard?: string }>;
}
