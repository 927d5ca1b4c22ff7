// 4b. A hosted model's rate limit: an OpenAI-compatible echo model behind a token bucket (429, Retry-After: 1).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT, cliRun, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

const require = createRequire(import.meta.url);

export const names = ['ratelimit'];

export async function measure() {
  const figures = {};
  const { startRateLimitedModel } = require(join(ROOT, 'out', 'test', 'harness', 'rateLimitedModel.js'));
  // Each row twice: a bucket that holds a second's worth of requests, and a strict one that holds a tenth
  // (bursts are punished at once).
  const rows = [1, 0.1].flatMap((burstSeconds) =>
    [
      { name: '100 req/s, 200 ms, 2,000 prompts', perSecond: 100, latencyMs: 200, prompts: 2000, headers: false },
      { name: 'the same with x-ratelimit-* headers', perSecond: 100, latencyMs: 200, prompts: 2000, headers: true },
      { name: '50 req/s, 1 s (a slow model), 600 prompts', perSecond: 50, latencyMs: 1000, prompts: 600, headers: false },
    ].map((row) => ({ ...row, burstSeconds, name: `${row.name}, ${burstSeconds} s burst` })),
  );
  say('4b. rate-limited model: token bucket (1 s and 0.1 s of burst), 429 with Retry-After: 1, concurrency 64');
  figures.ratelimit = [];
  for (const row of rows) {
    const sb = await sandboxProcess(['--benchmark-traces', String(row.prompts)]);
    const model = await startRateLimitedModel(row);
    try {
      const r = await cliRun(
        runArgs(sb, ['--target', 'openai', '--openai-base-url', `${model.url}/v1`, '--model', 'echo', '--api-key-env', 'BENCH_KEY', '--concurrency', '64', '--state-dir', tempDir()]),
        { EVAL_RUNNER_TOKEN: sb.token, BENCH_KEY: 'unused' },
      );
      const idealMs = (row.prompts / row.perSecond) * 1000;
      const runningMs = r.summary.runningMs;
      figures.ratelimit.push({
        ...row,
        runMs: runningMs,
        idealMs,
        goodput: row.prompts / (runningMs / 1000) / row.perSecond,
        rejected: model.stats.rejected,
        rejectedShare: model.stats.rejected / (model.stats.admitted + model.stats.rejected),
        lost: row.prompts - r.summary.counts.submitted,
      });
    } finally {
      await model.close();
      await sb.stop();
    }
  }
  return figures;
}
