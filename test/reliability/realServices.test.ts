import assert from 'node:assert/strict';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox, SubmitDataConvention } from '../../src/sandbox/server';
import { summaryText } from '../../src/core/progressText';
import { engineRun, scriptedTarget, tempDir } from '../unit/helpers/runs';

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
});
