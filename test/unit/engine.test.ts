import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EVALUATION_KINDS } from '../../src/api/evaluationKinds';
import { createEchoTarget } from '../../src/core/targets/echo/echoTarget';
import { TargetError } from '../../src/core/targets/target';
import { journalPath, parseJournal, readJournal } from '../../src/core/journal/journal';
import { reportData } from '../../src/core/report/reportData';
import { TraceStore } from '../../src/core/store/traceStore';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import type { RunProgress } from '../../src/core/run/runState';
import { engineRun, scriptedTarget, tempDir } from './helpers/runs';

describe('run engine against the sandbox', () => {
  let sandbox: Sandbox;
  let stateDir: string;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 0.5, evaluationSeconds: 0 });
    stateDir = tempDir();
  });
  afterEach(() => sandbox.close());

  it('runs both kinds end to end: every answer submitted exactly as the target gave it', async () => {
    const events: RunProgress[] = [];
    for (const kind of EVALUATION_KINDS) {
      const { summary } = await engineRun(sandbox, kind, stateDir, createEchoTarget(), {
        waitForGenerationMs: 10_000,
        onProgress: (p) => events.push(p),
        progressIntervalMs: 50,
      });
      const id = kind === 'benchmark' ? 1 : 2;
      const total = kind === 'benchmark' ? 25 : 20;
      assert.equal(summary.outcome, 'completed', summary.message);
      assert.equal(summary.counts.submitted, total);
      assert.equal(summary.submittedNow, total);
      assert.equal(sandbox.summary(id)!.counts.Sent, 0);
      assert.equal(sandbox.summary(id)!.counts['Awaiting Trigger'], 0);
    }
    // The echo target's answers are the prompts, every character.
    assert.equal(sandbox.answerOf(1, 'bench-0005'), 'Line one\r\nLine two\nLine three\r\n\tIndented — keep the layout.');
    assert.equal(sandbox.answerOf(1, 'bench/0007 %2F'), '   leading and trailing spaces matter   ');
    assert.ok(events.some((e) => e.phase === 'done'));
    assert.ok(events.length < 200, 'progress is throttled');
  });

  it('a fresh run counts from nothing: its progress never shows the answers it sets aside', async () => {
    await engineRun(sandbox, 'benchmark', stateDir, createEchoTarget());
    const events: RunProgress[] = [];
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, createEchoTarget(), { mode: 'fresh', onProgress: (p) => events.push(p), progressIntervalMs: 1 });
    assert.equal(summary.submittedNow, 25);
    assert.ok(events.length > 2);
    assert.equal(events[0]!.counts.submitted, 0, 'the first progress line shows no submitted trace');
    events.forEach((e, i) => i && assert.ok(e.counts.submitted >= events[i - 1]!.counts.submitted, `submitted went down at event ${i}`));
  });

  it('resumes: journaled answers are submitted without calling the target again; a finished run submits nothing', async () => {
    // First run: the service refuses every submission (a 500 is not retried for POST), answers are journaled.
    let refuse = true;
    await sandbox.close();
    sandbox = await startSandbox({
      port: 0,
      evaluationSeconds: 0,
      intercept: (req, res) => {
        if (!refuse || req.method !== 'POST') return false;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"success":false,"message":"down for maintenance"}');
        return true;
      },
    });
    const target = scriptedTarget((p) => `answer to ${p}`);
    const first = await engineRun(sandbox, 'benchmark', stateDir, target);
    assert.equal(first.summary.outcome, 'failedTraces');
    assert.equal(first.summary.counts.failed, 25);
    assert.match(first.summary.failed[0]!.reason, /down for maintenance/);
    assert.equal(target.total(), 25);

    refuse = false;
    const second = await engineRun(sandbox, 'benchmark', stateDir, target);
    assert.equal(second.summary.outcome, 'completed');
    assert.equal(second.summary.submittedNow, 25);
    assert.equal(second.summary.targetCalls, 0, 'no target call on resume');
    assert.equal(target.total(), 25);
    assert.equal(sandbox.answerOf(1, 'bench-0000')?.startsWith('answer to Summarise'), true);

    const before = sandbox.stats.submissions;
    const third = await engineRun(sandbox, 'benchmark', stateDir, target);
    assert.equal(third.summary.outcome, 'completed');
    assert.equal(third.summary.submittedNow, 0);
    assert.equal(sandbox.stats.submissions, before, 'a finished evaluation submits nothing');
  });

  it('retries a failing target twice, then fails the trace with the reason', async () => {
    const target = scriptedTarget((p) => {
      if (p.includes('Translate to French')) throw new TargetError('model crashed', 'failed');
      return 'ok';
    });
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, target);
    assert.equal(summary.outcome, 'failedTraces');
    const failing = [...target.calls.entries()].filter(([p]) => p.includes('Translate to French'));
    assert.ok(failing.length > 0);
    for (const [, calls] of failing) assert.equal(calls, 3);
    assert.equal(summary.failed.length, failing.length);
    assert.equal(summary.failed[0]!.reason, 'model crashed');
  });

  it('with onTargetError=submit, submits fixed words for a target error (never its text) and marks it in the journal', async () => {
    const target = scriptedTarget((p) => {
      if (p.startsWith('Ignore all previous')) throw new TargetError('I cannot help with that (content policy)', 'refused');
      return 'fine';
    });
    const { summary, store } = await engineRun(sandbox, 'robustness', stateDir, target, {
      onTargetError: 'submit',
      waitForGenerationMs: 10_000,
    });
    assert.equal(summary.outcome, 'completed');
    assert.equal(sandbox.answerOf(2, 'adv-0000'), 'target error: refused');
    assert.equal(store.get('adv-0000')!.errorAnswer, true);
    assert.equal(target.calls.get(store.get('adv-0000')!.prompt!), 1, 'a refusal is not retried');
  });

  it('paces the target down on a 429 (saying so), retries that trace after its Retry-After, and completes the run', async () => {
    let limited = false;
    const target = scriptedTarget(async () => {
      await new Promise((r) => setTimeout(r, 2));
      if (!limited) {
        limited = true;
        throw new TargetError('slow down', 'rateLimited', { retryAfterMs: 20 });
      }
      return 'ok';
    });
    const logs: string[] = [];
    const { summary, store } = await engineRun(sandbox, 'benchmark', stateDir, target, { concurrency: 8, onLog: (_l, m) => logs.push(m) });
    assert.equal(summary.outcome, 'completed');
    assert.equal(summary.counts.submitted, 25);
    assert.ok(logs.some((l) => /The target is rate-limiting; pacing at \d+(\.\d)? requests\/s\./.test(l)), logs.join('\n'));
    assert.equal(target.total(), 26, 'one call per trace, and one more for the trace that was refused');
    // The rate limit is journaled with the run's end, for its timeline (the report's, Run Details').
    const reread = TraceStore.fromRecords((await readJournal(journalPath(stateDir, { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 }))).records);
    const run = reread.currentRun!;
    assert.equal(run.rateLimitTimes.length, 1);
    assert.ok(run.rateLimitTimes[0]! >= run.startedAt && run.rateLimitTimes[0]! <= run.endedAt!);
    const timeline = reportData(reread, { kind: 'benchmark', evaluationId: 1, origin: 'o' }).runs.at(-1)!.timeline;
    assert.equal(timeline.limited.reduce((a, b) => a + b, 0), 1);
    assert.equal(timeline.answers.reduce((a, b) => a + b, 0), 25);
    assert.equal(store.currentRun!.rateLimitTimes.length, 1);
  });

  it('logs why each trace failed, up to a cap, so Show Logs explains a partial run', async () => {
    const target = scriptedTarget(() => {
      throw new TargetError('model endpoint answered HTTP 400: context too long', 'failed', { retryable: false });
    });
    const warnings: string[] = [];
    // Every trace fails, and every failure is to be seen: the stop at a high error rate is off.
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, target, { concurrency: 4, maxErrorRate: 'off', onLog: (l, m) => l === 'warn' && warnings.push(m) });
    assert.equal(summary.outcome, 'failedTraces');
    assert.equal(summary.counts.failed, 25);
    const perTrace = warnings.filter((m) => /^Trace ".+" failed at the target: model endpoint answered HTTP 400: context too long$/.test(m));
    assert.equal(perTrace.length, 20, warnings.join('\n'));
    assert.equal(warnings.filter((m) => m.startsWith('More traces failed')).length, 1);
    assert.equal(warnings.length, 21);
  });

  it('stops on an exhausted quota instead of retrying forever', async () => {
    const target = scriptedTarget(() => {
      throw new TargetError('You exceeded your current quota, please check your plan and billing details', 'rateLimited', { quota: true, retryAfterMs: 1 });
    });
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, target, { concurrency: 2 });
    assert.equal(summary.outcome, 'quota');
    assert.match(summary.message!, /quota or rate limit will not recover/);
    assert.ok(target.total() <= 6, `stopped after a few tries (${target.total()})`);
    assert.equal(summary.counts.submitted, 0);
  });

  it('stops when the target asks to retry after more than the limit', async () => {
    const target = scriptedTarget(() => {
      throw new TargetError('rate limited', 'rateLimited', { retryAfterMs: 3_600_000 });
    });
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, target, { concurrency: 1 });
    assert.equal(summary.outcome, 'quota');
    assert.equal(target.total(), 1);
  });

  it('cancels: nothing new starts, in-flight work aborts, the journal stays consistent', async () => {
    const controller = new AbortController();
    const target = scriptedTarget(async (_p, _n, signal) => {
      await new Promise((resolve, reject) => {
        const t = setTimeout(resolve, 40);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
        });
      });
      return 'slow answer';
    });
    setTimeout(() => controller.abort(), 120);
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, target, { concurrency: 4, signal: controller.signal });
    assert.equal(summary.outcome, 'cancelled');
    assert.ok(summary.counts.submitted < 25);
    assert.equal(summary.counts.running, 0);
    const text = readFileSync(journalPath(stateDir, { origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1 }), 'utf8');
    const parsed = parseJournal(text);
    assert.equal(parsed.tornTail, false);
    assert.equal(parsed.corruptLines, 0);
    // A fresh run finishes the rest without redoing journaled answers.
    const callsBefore = target.total();
    const answered = parsed.records.filter((r) => r.t === 'answer').length;
    const resumed = await engineRun(sandbox, 'benchmark', stateDir, target);
    assert.equal(resumed.summary.outcome, 'completed');
    assert.equal(target.total() - callsBefore, 25 - answered);
  });

  it('loses nothing over a flaky, slow service: a submission that failed every retry is resubmitted next run', async () => {
    await sandbox.close();
    sandbox = await startSandbox({ port: 0, failRate: 0.2, latencyMs: 5, evaluationSeconds: 0, generationSeconds: 0 });
    const target = scriptedTarget((p) => p);
    // Retries live in the API module (4 attempts); a trace whose submission failed them all keeps its journaled answer.
    let outcome = '';
    for (let run = 0; run < 4 && outcome !== 'completed'; run++) {
      const { summary } = await engineRun(sandbox, 'benchmark', stateDir, target, { concurrency: 8 });
      outcome = summary.outcome;
      for (const f of summary.failed) assert.match(f.reason, /HTTP 503/);
    }
    assert.equal(outcome, 'completed');
    assert.equal(sandbox.summary(1)!.counts.Responded + sandbox.summary(1)!.counts.Evaluated, 25);
    assert.equal(target.total(), 25, 'the target was called once per trace');
  });

  it('reports a rejected token and an unreachable service as run outcomes', async () => {
    const bad = await engineRun(sandbox, 'benchmark', stateDir, createEchoTarget(), {}, 'wrong-token');
    assert.equal(bad.summary.outcome, 'auth');
    const url = sandbox.baseUrl;
    await sandbox.close();
    sandbox = await startSandbox({ port: 0 });
    const gone = { ...sandbox, baseUrl: url } as Sandbox;
    const unreachable = await engineRun(gone, 'benchmark', tempDir(), createEchoTarget());
    assert.equal(unreachable.summary.outcome, 'unreachable');
  });

  it('handles a trace id listed twice once, with a warning', async () => {
    const logs: string[] = [];
    const target = scriptedTarget((p) => p);
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, target, {
      prompts: [
        { traceId: 'bench-0000', content: 'a' },
        { traceId: 'bench-0000', content: 'b' },
      ],
      onLog: (_l, m) => logs.push(m),
    });
    assert.equal(summary.counts.submitted, 1);
    assert.equal(target.total(), 1);
    assert.ok(logs.some((l) => /listed 1 trace id\(s\) more than once/.test(l)));
  });

  it('holds submissions while the service answers 503 to every API attempt, probes it, and submits everything in the same run', async () => {
    await sandbox.close();
    let posts = 0;
    sandbox = await startSandbox({
      port: 0,
      evaluationSeconds: 0,
      // The first 5 POSTs fail: more than the API module's 4 attempts for the first trace.
      intercept: (req, res) => {
        if (req.method !== 'POST' || ++posts > 5) return false;
        res.writeHead(503, { 'content-type': 'text/html' }).end('<html>busy</html>');
        return true;
      },
    });
    const logs: string[] = [];
    const { summary } = await engineRun(sandbox, 'benchmark', stateDir, scriptedTarget((p) => p), {
      concurrency: 1,
      onLog: (_l, m) => logs.push(m),
    });
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.equal(summary.counts.submitted, 25);
    assert.ok(logs.some((l) => /The service is unavailable \(HTTP 503 Service Unavailable\); answers are journaled and wait/.test(l)), logs.join('\n'));
    assert.ok(logs.some((l) => /The service answers again after \d+ s/.test(l)), logs.join('\n'));
    assert.deepEqual(summary.holds.map((h) => [h.kind, h.cause]), [['outage', 'HTTP 503 Service Unavailable']]);
  });
});
