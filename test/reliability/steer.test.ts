import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { journalPath } from '../../src/core';
import { RUNNER_PROTOCOL_VERSION } from '../../src/protocol/runnerProtocol';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

/** A model on loopback that fails `failing(n)` calls (HTTP 400), counting calls and how many were in flight at most. */
export async function startCountingModel(options: { failing?: (n: number) => boolean; latencyMs?: number; gate?: { open: boolean } } = {}) {
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0, callTimes: [] as number[] };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const n = stats.calls++;
      stats.callTimes.push(Date.now());
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      // A closed gate holds every answer until the test opens it (the run cannot end before it is steered).
      const answer = () => {
        if (options.gate && !options.gate.open) return void setTimeout(answer, 10);
        stats.inFlight--;
        if (options.failing?.(n)) {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad request"}');
          return;
        }
        const prompt = (JSON.parse(body) as { prompt: string }).prompt;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: `re: ${prompt}` }));
      };
      setTimeout(answer, options.latencyMs ?? 5);
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

const until = async (what: () => boolean, ms = 30_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('gave up waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('a run you can steer: pause, resume and concurrency from another terminal', function () {
  this.timeout(120_000);

  it('no target call happens between pause and resume, and resume finishes the run; both journaled', async () => {
    const traces = 200;
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: traces, evaluationSeconds: 0 });
    const model = await startCountingModel({ latencyMs: 40 });
    const stateDir = tempDir();
    const which = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    try {
      const run = cli(['run', ...which, '--concurrency', '4', '--target', 'http', '--http-url', model.url, '--answer-path', 'answer'], { EVAL_RUNNER_TOKEN: sandbox.token });
      await until(() => model.stats.calls >= 20);
      const paused = await cli(['pause', ...which]);
      assert.equal(paused.code, 0, paused.stderr);
      assert.match(paused.stdout, /Paused the run of benchmark evaluation 1/);
      const atPause = model.stats.calls;
      // The calls in flight finish; then nothing more reaches the target for a second.
      await until(() => model.stats.inFlight === 0);
      const drained = model.stats.calls;
      assert.ok(drained - atPause <= 4, `at most the 4 in flight: ${drained - atPause}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(model.stats.calls, drained, 'no target call while paused');
      assert.ok(drained < traces, 'the run was not over');
      const resumed = await cli(['resume', ...which]);
      assert.equal(resumed.code, 0, resumed.stderr);
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(model.stats.calls, traces, 'every trace called once');
      assert.equal(sandbox.stats.submissions, traces);
      const steers = readFileSync(journalPath(stateDir, { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 }), 'utf8')
        .split('\n').filter((l) => l.includes('"t":"steer"')).map((l) => (JSON.parse(l) as { ev: string }).ev);
      assert.deepEqual(steers, ['pause', 'resume']);
      // status says them, in words and in --json.
      const status = await cli(['status', ...which]);
      assert.match(status.stdout, /: paused \d\d:\d\d:\d\d–\d\d:\d\d:\d\d\n/);
      const json = JSON.parse((await cli(['status', ...which, '--json'])).stdout) as { runs: Array<{ steers?: Array<{ ev: string }> }> };
      assert.deepEqual(json.runs[0]!.steers?.map((x) => x.ev), ['pause', 'resume']);
    } finally {
      await model.close();
      await sandbox.close();
    }
  });

  it('after set --concurrency 1 takes effect, at most one call is in flight at the target', async () => {
    const traces = 150;
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: traces, evaluationSeconds: 0 });
    // The first calls are held until the change is made, so a loaded machine cannot finish the run before it.
    const gate = { open: false };
    const model = await startCountingModel({ latencyMs: 20, gate });
    const which = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', tempDir()];
    try {
      const run = cli(['run', ...which, '--concurrency', '8', '--target', 'http', '--http-url', model.url, '--answer-path', 'answer'], { EVAL_RUNNER_TOKEN: sandbox.token });
      await until(() => model.stats.inFlight >= 8);
      assert.ok(model.stats.maxInFlight > 1, 'calls overlapped before');
      const set = await cli(['set', '--concurrency', '1', ...which]);
      gate.open = true;
      assert.equal(set.code, 0, set.stderr);
      assert.match(set.stdout, /at most 1 target call/);
      // Those in flight when it took effect finish; from then on one at a time.
      await until(() => model.stats.inFlight <= 1);
      const from = model.stats.calls;
      model.stats.maxInFlight = model.stats.inFlight;
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      assert.ok(model.stats.calls - from > 20, `calls after the change: ${model.stats.calls - from}`);
      assert.equal(model.stats.maxInFlight, 1);
      assert.equal(sandbox.stats.submissions, traces);
    } finally {
      await model.close();
      await sandbox.close();
    }
  });

  it('exit 2 in words: no run going on, several --state-dir running it, a runner of another version', async () => {
    const key = { origin: 'http://127.0.0.1:9', kind: 'benchmark' as const, evaluationId: 1 };
    const which = ['--base-url', key.origin, '--evaluation', '1', '--kind', 'benchmark'];
    const none = await cli(['pause', ...which, '--state-dir', tempDir()]);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /No run of benchmark evaluation 1 at http:\/\/127\.0\.0\.1:9 is going on/);
    // Runner files naming a live process of this user's (this test's): taken for runs going on.
    const runnerFile = (dir: string, version: number) => {
      const journal = journalPath(dir, key);
      // Owner-only, as a state folder's evaluation folders are (a looser one is refused before its file is read).
      mkdirSync(dirname(journal), { recursive: true, mode: 0o700 });
      writeFileSync(`${journal}.runner.json`, JSON.stringify({ version, pid: process.pid, socket: join(dir, 's'), secret: '00'.repeat(32), startedAt: Date.now() }), { mode: 0o600 });
      return dir;
    };
    const [a, b] = [runnerFile(tempDir(), RUNNER_PROTOCOL_VERSION), runnerFile(tempDir(), RUNNER_PROTOCOL_VERSION)];
    const both = await cli(['resume', ...which, '--state-dir', a, '--state-dir', b]);
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /running in more than one of the state folders given .*ambiguous/);
    const old = await cli(['set', '--concurrency', '2', ...which, '--state-dir', runnerFile(tempDir(), RUNNER_PROTOCOL_VERSION - 1)]);
    assert.equal(old.code, 2, old.stderr);
    assert.match(old.stderr, new RegExp(`speaks version ${RUNNER_PROTOCOL_VERSION - 1} of the runner protocol`));
  });
});
