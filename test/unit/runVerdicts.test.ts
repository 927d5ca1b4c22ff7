import assert from 'node:assert/strict';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { EvaluationSession } from '../../src/core/session/session';
import { TraceStore } from '../../src/core/store/traceStore';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

interface ExportRow {
  traceId: string;
  runId: string | null;
  answer: string | null;
  rating: string | null;
  note: string | null;
}

describe('verdicts belong to their run’s answers', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let stateDir: string;
  let env: Record<string, string>;
  const svc = () => ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  const key = () => ({ origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 });
  const session = () => new EvaluationSession(key(), stateDir);
  const runs = async () => (JSON.parse((await cli(['status', ...svc(), '--json'], env)).stdout) as { runs: Array<{ runId: string }> }).runs.map((r) => r.runId);
  const exported = async (...more: string[]) => {
    const r = await cli(['export', ...svc(), '--format', 'jsonl', ...more], env);
    assert.equal(r.code, 0, r.stderr);
    return new Map(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as ExportRow).map((row) => [row.traceId, row]));
  };

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 6, evaluationSeconds: 0 });
    stateDir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
  });
  afterEach(() => sandbox.close());

  it('keeps a verdict with its run through a fresh run: export --run gives each run’s answers and verdicts', async () => {
    assert.equal((await cli(['run', ...svc(), '--target', 'echo'], env)).code, 0);
    await session().setVerdict('bench-0002', 'bad', 'wrong unit');
    await session().setVerdict('bench-0003', 'good', undefined);
    assert.equal((await cli(['run', ...svc(), '--target', 'command', '--command', 'tr a-z A-Z', '--fresh'], env)).code, 0);
    const [first, second] = await runs();

    const latest = await exported();
    assert.equal(latest.get('bench-0002')!.runId, second);
    assert.equal(latest.get('bench-0002')!.rating, null, 'the new run’s answers are not judged yet');
    assert.equal(latest.get('bench-0003')!.rating, null);
    assert.deepEqual([...(await exported('--run', second!)).values()], [...latest.values()], 'the latest run is the default');

    // A prefix of the id, as status shows it, names the run.
    const older = await exported('--run', first!.slice(0, first!.length - 2));
    const bad = older.get('bench-0002')!;
    assert.equal(bad.runId, first);
    assert.equal(bad.rating, 'bad');
    assert.equal(bad.note, 'wrong unit');
    assert.equal(older.get('bench-0003')!.rating, 'good');
    assert.equal(older.get('bench-0004')!.rating, null);
    assert.ok(older.get('bench-0002')!.answer !== latest.get('bench-0002')!.answer, 'the first run’s own answers');

    // A new session reads them, by run, from the journal.
    const reloaded = session();
    await reloaded.load();
    assert.equal(reloaded.store.verdictOf(first, 'bench-0002')?.rating, 'bad');
    assert.equal(reloaded.store.verdictOf(second, 'bench-0002'), undefined);
    assert.equal(reloaded.store.get('bench-0002')!.rating, undefined);
  });

  it('refuses an unknown run with exit 2 and the runs there are', async () => {
    assert.equal((await cli(['run', ...svc(), '--target', 'echo'], env)).code, 0);
    const [only] = await runs();
    const r = await cli(['export', ...svc(), '--format', 'csv', '--run', 'nosuchrun'], env);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /No run "nosuchrun"/);
    assert.ok(r.stderr.includes(only!), r.stderr);
  });

  it('reads a verdict written before verdicts named a run as the run of the answer it judged', () => {
    const records: JournalRecord[] = [
      { t: 'run', at: 1, run: 'r1', fp: 'x', target: 'echo' },
      { t: 'answer', id: 't1', a: 'one', at: 2 },
      { t: 'run', at: 3, run: 'r2', fp: 'y', target: 'other' },
      // Written under r2, but about r1's answer, which t1 still held.
      { t: 'verdict', id: 't1', at: 4, rating: 'good', note: 'old line' },
      { t: 'run', at: 5, run: 'r3', fp: 'y', target: 'other', mode: 'fresh' },
      { t: 'answer', id: 't1', a: 'one', at: 6 },
    ];
    const store = TraceStore.fromRecords(records);
    assert.deepEqual(store.verdictOf('r1', 't1'), { rating: 'good', note: 'old line' });
    assert.equal(store.verdictOf('r2', 't1'), undefined);
    assert.equal(store.get('t1')!.rating, undefined, 'r3’s answer is the same text, but not judged');
    // Carried over (Compare Runs): the trace's own verdict is r3's.
    store.apply({ t: 'verdict', id: 't1', at: 7, rating: 'good', run: 'r3' });
    assert.equal(store.get('t1')!.rating, 'good');
    // A verdict on an older run's answer leaves the current one as it is.
    store.apply({ t: 'verdict', id: 't1', at: 8, rating: 'bad', run: 'r1' });
    assert.equal(store.get('t1')!.rating, 'good');
    assert.equal(store.verdictOf('r1', 't1')?.rating, 'bad');
    // The same run answering again with another text loses its verdict.
    store.apply({ t: 'answer', id: 't1', a: 'two', at: 9, run: 'r3' });
    assert.equal(store.get('t1')!.rating, undefined);
    assert.equal(store.verdictOf('r3', 't1'), undefined);
    assert.equal(store.verdictOf('r1', 't1')?.rating, 'bad');
  });

  it('carries a verdict over to another run’s same answer, and refuses a different one', async () => {
    assert.equal((await cli(['run', ...svc(), '--target', 'echo'], env)).code, 0);
    await session().setVerdict('bench-0004', 'good', 'fine');
    await session().setVerdict('bench-0002', 'bad', undefined);
    assert.equal((await cli(['run', ...svc(), '--target', 'echo', '--fresh'], env)).code, 0);
    const [first, second] = await runs();
    const s = session();
    await s.load();
    const answer = s.store.get('bench-0004')!.answer;
    await s.carryVerdict('bench-0004', { run: first!, answer }, { run: second!, answer });
    assert.equal(s.store.get('bench-0004')!.rating, 'good');
    assert.equal(s.store.get('bench-0004')!.note, 'fine');
    await assert.rejects(s.carryVerdict('bench-0002', { run: first!, answer: 'x' }, { run: second!, answer: 'y' }), /differently/);
    await assert.rejects(s.carryVerdict('bench-0003', { run: first!, answer }, { run: second!, answer }), /no verdict/);
    const again = session();
    await again.load();
    assert.equal(again.store.verdictOf(second, 'bench-0004')?.rating, 'good');
    assert.equal((await exported()).get('bench-0004')!.rating, 'good');
  });
});
