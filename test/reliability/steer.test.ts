import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

/** A model on loopback that fails `failing(n)` calls (HTTP 400), counting calls and how many were in flight at most. */
export async function startCountingModel(options: { failing?: (n: number) => boolean; latencyMs?: number } = {}) {
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0, callTimes: [] as number[] };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const n = stats.calls++;
      stats.callTimes.push(Date.now());
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      setTimeout(() => {
        stats.inFlight--;
        if (options.failing?.(n)) {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad request"}');
          return;
        }
        const prompt = (JSON.parse(body) as { prompt: string }).prompt;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: `re: ${prompt}` }));
      }, options.latencyMs ?? 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/gen`;
  return { url, stats, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('a run you can steer: the target that mostly fails', function () {
  this.timeout(120_000);

  for (const off of [false, true]) {
    it(off ? '--max-error-rate off: the same target is called for every trace' : 'a target failing 9 calls in 10 stops the run early, in words (exit 1)', async () => {
      const traces = 200;
      const sandbox = await startSandbox({ port: 0, benchmarkTraces: traces, evaluationSeconds: 0 });
      const model = await startCountingModel({ failing: (n) => n % 10 !== 0 });
      try {
        const r = await cli(
          ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', tempDir(), '--concurrency', '4',
            '--target', 'http', '--http-url', model.url, '--answer-path', 'answer', ...(off ? ['--max-error-rate', 'off'] : [])],
          { EVAL_RUNNER_TOKEN: sandbox.token },
        );
        assert.equal(r.code, 1, r.stderr);
        if (off) {
          assert.equal(model.stats.calls, traces, 'every trace went to the target');
          return;
        }
        assert.ok(model.stats.calls < 40, `stopped early: ${model.stats.calls} calls`);
        assert.match(r.stderr, /The target failed \d+ of the last \d+ calls \(\d+ %, over the limit of 50 %\)/);
        assert.match(r.stderr, /the most common error \(\d+ of them\): .*400/);
        assert.match(r.stderr, /--max-error-rate/);
      } finally {
        await model.close();
        await sandbox.close();
      }
    });
  }
});
