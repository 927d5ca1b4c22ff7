import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClient } from '../../src/api/client';
import { journalPath, readJournal } from '../../src/core/journal/journal';
import type { JournalRecord } from '../../src/core/journal/journalRecords';
import { percentile, runStats } from '../../src/core/report/runStats';
import { EvaluationSession } from '../../src/core/session/session';
import { TraceStore } from '../../src/core/store/traceStore';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox, wordCount } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';
import { FAST_RETRY } from './helpers/servers';

interface StatusRun {
  runId: string;
  target: string;
  latencyMs?: { p50: number; p95: number; max: number };
  tokens?: { prompt: number; completion: number };
  errors: Record<string, number>;
}

describe('run statistics: latency percentiles, tokens, errors by reason', () => {
  it('computes nearest-rank percentiles on known latencies', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(sorted, 0.5), 50);
    assert.equal(percentile(sorted, 0.95), 95);
    assert.equal(percentile([7], 0.95), 7);
    assert.ok(Number.isNaN(percentile([], 0.5)));
  });

  it('summarises a run from its journal: target answers only, error answers and failures grouped by reason', () => {
    const records: JournalRecord[] = [{ t: 'run', at: 1_000, run: 'r1', fp: 'x', target: 'echo' }];
    // Latencies 100 down to 1, shuffled order must not matter.
    for (let i = 100; i >= 1; i--) records.push({ t: 'answer', id: `t${i}`, a: 'x', at: 1_000 + i * 10, ms: i, run: 'r1', tp: 2, tc: 3 });
    records.push({ t: 'answer', id: 'e1', a: 'target error: HTTP 500', at: 2_000, ms: 0, err: true, run: 'r1' });
    records.push({ t: 'answer', id: 'u1', a: 'typed by a person', at: 1_500, by: 'user' });
    records.push({ t: 'failed', id: 'f1', reason: 'The model endpoint http://m answered HTTP 503: busy, try later', stage: 'target', at: 3_000 });
    records.push({ t: 'failed', id: 'f2', reason: 'The model endpoint http://m answered HTTP 503: other words', stage: 'target', at: 3_000 });
    const store = TraceStore.fromRecords(records);
    const stats = runStats(store.runs[0]!);
    assert.deepEqual(stats.latencyMs, { p50: 50, p95: 95, max: 100 });
    assert.deepEqual(stats.tokens, { prompt: 200, completion: 300 });
    assert.deepEqual(stats.errors, { 'target error: HTTP 500': 1, 'The model endpoint http://m answered HTTP 503': 2 });
    assert.equal(stats.tracesPerSecond, 100);
    const none = runStats(TraceStore.fromRecords([{ t: 'run', at: 1, run: 'r', fp: 'x', target: 'echo' }]).runs[0]!);
    assert.equal(none.latencyMs, undefined);
    assert.equal(none.tokens, undefined, 'no tokens reported: absent, never zero');
  });
});

describe('review and insight on the real sandbox (CLI and core)', function () {
  this.timeout(60_000);
  const TRACES = 24;
  let sandbox: Sandbox;
  let stateDir: string;
  let env: Record<string, string>;
  const svc = () => ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  const statusRuns = async () => (JSON.parse((await cli(['status', ...svc(), '--json'], env)).stdout) as { runs: StatusRun[] }).runs;
  const prompts = seedPrompts('benchmark', TRACES);
  const words = prompts.reduce((n, p) => n + wordCount(p.content), 0);
  const session = () => new EvaluationSession({ origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 }, stateDir);

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    stateDir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
  });
  afterEach(() => sandbox.close());

  it('keeps the tokens an OpenAI-compatible model reports, per trace and per run, in status and the export', async () => {
    const r = await cli(['run', ...svc(), '--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'sandbox-echo'], env);
    assert.equal(r.code, 0, r.stderr);
    const [run] = await statusRuns();
    assert.deepEqual(run!.tokens, { prompt: words, completion: words });
    assert.ok(run!.latencyMs && run!.latencyMs.p50 <= run!.latencyMs.p95 && run!.latencyMs.p95 <= run!.latencyMs.max, JSON.stringify(run));
    const text = (await cli(['status', ...svc()], env)).stdout;
    assert.match(text, new RegExp(`${run!.runId}: latency p50 \\d+ ms · p95 \\d+ ms · max \\d+ ms · tokens ${words.toLocaleString('en-US')} prompt \\+ ${words.toLocaleString('en-US')} completion`));
    const lines = (await cli(['export', ...svc(), '--format', 'jsonl'], env)).stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const first = lines.find((l) => l.traceId === prompts[0]!.traceId)!;
    assert.equal(first.runId, run!.runId);
    assert.equal(first.target, run!.target);
    assert.equal(first.promptTokens, wordCount(prompts[0]!.content));
    assert.equal(first.completionTokens, wordCount(prompts[0]!.content));
    assert.equal(typeof first.latencyMs, 'number');
  });

  it('reads tokens from an HTTP target at --usage-path, and reports none for a target that has none', async () => {
    const http = [
      '--target', 'http', '--http-url', `${sandbox.baseUrl}/v1/chat/completions`,
      '--body-template', '{"model":"m","messages":[{"role":"user","content":"{{prompt}}"}]}',
      '--answer-path', 'choices.0.message.content', '--usage-path', 'usage',
    ];
    assert.equal((await cli(['run', ...svc(), ...http], env)).code, 0);
    assert.equal((await cli(['run', ...svc(), '--target', 'echo', '--fresh'], env)).code, 0);
    const [httpRun, echoRun] = await statusRuns();
    assert.deepEqual(httpRun!.tokens, { prompt: words, completion: words });
    assert.equal(echoRun!.tokens, undefined);
    assert.ok(echoRun!.latencyMs, 'echo still has latencies');
  });

  it('journals verdicts and notes: they survive a reload, go into the export, and a new answer clears them', async () => {
    assert.equal((await cli(['run', ...svc(), '--target', 'echo'], env)).code, 0);
    const [a, b] = prompts;
    await session().setVerdict(a!.traceId, 'good', 'clear and right');
    await session().setVerdict(b!.traceId, 'bad', '=HYPERLINK("http://x")');
    const reloaded = session();
    await reloaded.load();
    assert.equal(reloaded.store.get(a!.traceId)!.rating, 'good');
    assert.equal(reloaded.store.get(a!.traceId)!.note, 'clear and right');
    assert.equal(reloaded.store.get(b!.traceId)!.rating, 'bad');
    const csv = (await cli(['export', ...svc(), '--format', 'csv'], env)).stdout.split('\r\n');
    const head = csv[0]!.split(',');
    assert.deepEqual(head.slice(5, 12), ['runId', 'target', 'latencyMs', 'promptTokens', 'completionTokens', 'rating', 'note']);
    const rowA = csv.find((l) => l.startsWith(`${a!.traceId},`))!;
    assert.match(rowA, /,good,clear and right,/);
    const rowB = csv.find((l) => l.startsWith(`${b!.traceId},`))!;
    assert.ok(rowB.includes(`,bad,"'=HYPERLINK(""http://x"")",`), rowB);
    // Nothing about verdicts reaches the service.
    assert.equal(sandbox.answerOf(1, a!.traceId), a!.content);
    // Clearing, and a fresh run (new answers) clearing the rest.
    await session().setVerdict(a!.traceId, undefined, undefined);
    assert.equal((await cli(['run', ...svc(), '--target', 'command', '--command', 'tr a-z A-Z', '--fresh'], env)).code, 0);
    const after = session();
    await after.load();
    assert.equal(after.store.get(a!.traceId)!.rating, undefined);
    assert.equal(after.store.get(b!.traceId)!.rating, undefined, 'the verdict was on the old answer');
  });

  it('compares two runs from the journal alone and submits one run’s answer as that run’s', async () => {
    assert.equal((await cli(['run', ...svc(), '--target', 'echo'], env)).code, 0);
    assert.equal((await cli(['run', ...svc(), '--target', 'command', '--command', 'tr a-z A-Z', '--fresh'], env)).code, 0);
    const [echoRun, upperRun] = await statusRuns();
    const requests = sandbox.stats.requests.size;
    const s = session();
    const rows = await s.compare(echoRun!.runId, upperRun!.runId);
    assert.equal(rows.length, TRACES);
    const differing = rows.filter((r) => r.differs);
    const expected = prompts.filter((p) => p.content !== p.content.toUpperCase());
    assert.equal(differing.length, expected.length);
    assert.equal(rows[0]!.a!.answer, prompts[0]!.content);
    assert.equal(rows[0]!.b!.answer, prompts[0]!.content.toUpperCase());
    assert.equal(typeof rows[0]!.a!.latencyMs, 'number');
    assert.equal(sandbox.stats.requests.size, requests, 'no service call');

    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, retry: FAST_RETRY });
    try {
      const one = differing[0]!;
      await s.submitAnswer(client, one.traceId, one.a!.answer, echoRun!.runId);
      assert.equal(sandbox.answerOf(1, one.traceId), one.a!.answer);
    } finally {
      await client.close();
    }
    const info = s.store.get(differing[0]!.traceId)!;
    assert.equal(info.answerRun, echoRun!.runId, 'journaled as the echo run’s answer');
    assert.equal(info.answeredBy, 'target');
    const { records } = await readJournal(journalPath(stateDir, s.key));
    assert.ok(records.some((r) => r.t === 'answer' && r.id === differing[0]!.traceId && r.run === echoRun!.runId && r.by === undefined));
    assert.ok(readFileSync(join(s.journalFile), 'utf8').length > 0);
  });
});
