import assert from 'node:assert/strict';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox, SubmitDataConvention } from '../../src/sandbox/server';
import { summaryText } from '../../src/core/run/progressText';
import { engineRun, scriptedTarget, tempDir } from '../unit/helpers/runs';
import { seedPrompts } from '../../src/sandbox/seed';
import { EvaluationSession } from '../../src/core/session/session';

/**
 * Another implementation of the service keeps the spec's promises (success: true on success) and differs
 * where the spec is silent. Each convention is a sandbox switch, so users can try them too.
 */
describe('real services: what the spec promises, whatever the rest holds', function () {
  this.timeout(30_000);
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  for (const data of ['null', 'object', 'absent'] as SubmitDataConvention[]) {
    it(`a submit answered with success: true and data ${data} is a recorded answer; the next run submits nothing again`, async () => {
      sandbox = await startSandbox({ port: 0, generationSeconds: 0, evaluationSeconds: 0, submitData: data });
      const stateDir = tempDir();
      const target = scriptedTarget((p) => `answer: ${p.slice(0, 20)}`);
      const first = await engineRun(sandbox, 'benchmark', stateDir, target);
      assert.equal(first.summary.outcome, 'completed', first.summary.message);
      assert.equal(first.summary.counts.submitted, 25);
      assert.equal(sandbox.stats.submissions, 25);
      const again = await engineRun(sandbox, 'benchmark', stateDir, target);
      assert.equal(again.summary.outcome, 'completed');
      assert.equal(again.summary.submittedNow, 0);
      assert.equal(sandbox.stats.submissions, 25, 'nothing submitted twice');
    });
  }

  it('an envelope with extra fields, no message and a numeric code is a success all the same', async () => {
    sandbox = await startSandbox({
      port: 0,
      generationSeconds: 0,
      evaluationSeconds: 0,
      intercept: (req, res) => {
        if (req.method !== 'POST') return false;
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ code: 20001, success: true, traceCount: 1, meta: { server: 'other' } }));
        });
        return true;
      },
    });
    const { summary } = await engineRun(sandbox, 'benchmark', tempDir(), scriptedTarget(() => 'ok'));
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.equal(summary.counts.submitted, 25);
  });

  it('business errors as HTTP 200 with success: false: a wrong token stops the run saying what the service said', async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 0, evaluationSeconds: 0, errorsAs200: true });
    const { summary } = await engineRun(sandbox, 'benchmark', tempDir(), scriptedTarget(() => 'ok'), {}, 'wrong-token');
    assert.equal(summary.outcome, 'error');
    assert.match(summary.message ?? '', /reported a failure.*personal access token is not valid/);
    assert.equal(sandbox.stats.submissions, 0);
  });

  it('business errors as HTTP 200: a robustness list asked for before generation is waited for, then run', async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 1, evaluationSeconds: 0, errorsAs200: true });
    const { summary } = await engineRun(sandbox, 'robustness', tempDir(), scriptedTarget(() => 'ok'), { waitForGenerationMs: 15_000 });
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.equal(summary.counts.submitted, 20);
  });

  it('the summary\'s rate is over the wall time, waits included, and says what it counts', async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 1.5, evaluationSeconds: 0 });
    const { summary } = await engineRun(sandbox, 'robustness', tempDir(), scriptedTarget(() => 'ok'), { waitForGenerationMs: 15_000 });
    const text = summaryText('robustness 2', summary);
    const m = /([\d.]+) s \(([\d.]+) submitted\/s\)/.exec(text);
    assert.ok(m, text);
    const seconds = Number(m[1]);
    const rate = Number(m[2]);
    assert.ok(seconds >= 1, `the wait for generation counts: ${text}`);
    assert.ok(Math.abs(rate - 20 / seconds) <= 0.1 + 20 / seconds * 0.1, `rate ${rate} = 20 / ${seconds}: ${text}`);
  });
  it('the list read again at the end: traces that appeared run in the same run, those that vanished are reported, not failed', async () => {
    const all = seedPrompts('robustness', 20);
    let lists = 0;
    sandbox = await startSandbox({
      port: 0,
      robustnessTraces: 20,
      generationSeconds: 0,
      evaluationSeconds: 0,
      // The first list lacks the last two traces (still being generated); the last lacks the first (withdrawn).
      intercept: (req, res) => {
        if (req.method !== 'GET' || !req.url?.startsWith('/api/evaluation/all-adv-prompts')) return false;
        const items = lists++ === 0 ? all.slice(0, 18) : all.slice(1);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'req_1', message: 'ok', data: items, success: true }));
        return true;
      },
    });
    const stateDir = tempDir();
    const { summary } = await engineRun(sandbox, 'robustness', stateDir, scriptedTarget((p) => `a ${p.length}`));
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.deepEqual(summary.listChanges, { appeared: [all[18]!.traceId, all[19]!.traceId], vanished: [all[0]!.traceId] });
    assert.equal(summary.failed.length, 0, 'a vanished trace is not a failure');
    for (const p of all) assert.ok(sandbox.answerOf(2, p.traceId) !== undefined, `${p.traceId} submitted`);
    assert.equal(summary.runId !== undefined, true);
    const text = summaryText('robustness 2', summary);
    assert.match(text, /the list read again at the end had 2 trace\(s\) more: run in this run/);
    assert.ok(text.includes(`1 trace(s) are no longer listed by the service (${JSON.stringify(all[0]!.traceId)}): reported, not failed`), text);
    const session = new EvaluationSession({ origin: new URL(sandbox.baseUrl).origin, kind: 'robustness', evaluationId: 2 }, stateDir);
    const status = await session.status();
    assert.deepEqual(status.runs[0]!.listChanges, summary.listChanges, 'kept in the journal for status --json');
  });
});
