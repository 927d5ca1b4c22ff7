import assert from 'node:assert/strict';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import { startRateLimitedModel } from '../harness/rateLimitedModel';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

describe('rate limits: a run through a rate-limited model loses nothing', function () {
  this.timeout(120_000);

  for (const headers of [false, true]) {
    it(`every trace submitted as answered; the target called once per trace plus its 429s${headers ? ' (x-ratelimit-* headers)' : ''}`, async () => {
      const traces = 300;
      const sandbox = await startSandbox({ port: 0, benchmarkTraces: traces, evaluationSeconds: 0 });
      // 100 requests a second at 50 ms each, against 64 requested in flight: far more than the bucket allows.
      const model = await startRateLimitedModel({ perSecond: 100, latencyMs: 50, headers });
      try {
        const r = await cli(
          ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', tempDir(), '--concurrency', '64',
            '--target', 'openai', '--openai-base-url', `${model.url}/v1`, '--model', 'echo', '--api-key-env', 'MODEL_KEY', '--json'],
          { EVAL_RUNNER_TOKEN: sandbox.token, MODEL_KEY: 'unused' },
        );
        assert.equal(r.code, 0, r.stderr);
        const summary = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; targetCalls?: number }).find((l) => l.type === 'summary')!;
        for (const p of seedPrompts('benchmark', traces)) {
          assert.equal(sandbox.answerOf(1, p.traceId), p.content, `trace ${p.traceId} submitted as the model answered`);
          assert.equal(model.stats.byPrompt.get(p.content), 1, `the model answered ${p.traceId} once`);
        }
        assert.equal(sandbox.stats.submissions, traces, 'each trace submitted once');
        assert.equal(summary.targetCalls, traces + model.stats.rejected, 'target calls: one per trace, plus the refused ones');
      } finally {
        await model.close();
        await sandbox.close();
      }
    });
  }

  it('a fixed cap (--max-rpm) keeps the pace under it: no 429 from a model that allows exactly that', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 40, evaluationSeconds: 0 });
    const model = await startRateLimitedModel({ perSecond: 20, latencyMs: 10 });
    try {
      const r = await cli(
        ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', tempDir(), '--concurrency', '64',
          '--target', 'openai', '--openai-base-url', `${model.url}/v1`, '--model', 'echo', '--api-key-env', 'MODEL_KEY', '--max-rpm', '1080'],
        { EVAL_RUNNER_TOKEN: sandbox.token, MODEL_KEY: 'unused' },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(model.stats.rejected, 0, 'paced at 18 requests a second, under the 20 allowed');
      assert.equal(sandbox.stats.submissions, 40);
    } finally {
      await model.close();
      await sandbox.close();
    }
  });
});
