import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

describe('CLI contract', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let stateDir: string;
  let env: Record<string, string>;
  const svc = (id: number, kind: string) => ['--base-url', sandbox.baseUrl, '--evaluation', String(id), '--kind', kind];

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 0, evaluationSeconds: 0 });
    stateDir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
  });
  afterEach(() => sandbox.close());

  it('has --help on every command', async () => {
    for (const command of ['run', 'prompts', 'submit', 'status', 'export', 'sandbox', 'demo']) {
      const r = await cli([command, '--help']);
      assert.equal(r.code, 0, command);
      assert.match(r.stdout, new RegExp(`Usage: eval-runner ${command}`));
    }
    assert.equal((await cli(['--help'])).code, 0);
  });

  it('exits 2 on usage and configuration errors, saying what to do', async () => {
    const unknown = await cli(['run', ...svc(1, 'benchmark'), '--target', 'echo', '--frobnicate'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown option '--frobnicate'/);
    assert.match(unknown.stderr, /eval-runner run --help/);
    const noToken = await cli(['run', ...svc(1, 'benchmark'), '--target', 'echo']);
    assert.equal(noToken.code, 2);
    assert.match(noToken.stderr, /Set EVAL_RUNNER_TOKEN/);
    const badKind = await cli(['prompts', ...svc(1, 'bench')], env);
    assert.equal(badKind.code, 2);
    assert.match(badKind.stderr, /--kind must be benchmark or robustness/);
    assert.equal((await cli(['nope'])).code, 2);
  });

  it('exits 0 when every trace is submitted, and a rerun submits nothing', async () => {
    const args = ['run', ...svc(1, 'benchmark'), '--target', 'echo', '--state-dir', stateDir];
    const r = await cli(args, env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /25\/25 submitted \(25 now\), 0 failed/);
    const again = await cli(args, env);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /25\/25 submitted \(0 now\)/);
    assert.equal(sandbox.stats.submissions, 25);
  });

  it('prints only JSON lines with --json, ending with the summary', async () => {
    const r = await cli(['run', ...svc(2, 'robustness'), '--target', 'echo', '--state-dir', stateDir, '--json', '--encoding', 'multipart'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; exitCode?: number; counts?: { submitted: number } });
    const last = lines.at(-1)!;
    assert.equal(last.type, 'summary');
    assert.equal(last.exitCode, 0);
    assert.equal(last.counts!.submitted, 20);
    assert.ok(lines.slice(0, -1).every((l) => l.type === 'progress'));
  });

  it('exits 1 with the failed traces listed', async () => {
    const r = await cli(['run', ...svc(1, 'benchmark'), '--target', 'command', '--command', 'echo boom >&2; exit 7', '--state-dir', stateDir, '--max-error-rate', 'off'], env);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /0\/25 submitted .* 25 failed/);
    assert.match(r.stdout, /failed: "bench-0000": The command exited with 7: boom/);
    const status = await cli(['status', ...svc(1, 'benchmark'), '--state-dir', stateDir, '--json']);
    assert.equal((JSON.parse(status.stdout) as { counts: { failed: number } }).counts.failed, 25);
  });

  it('exits 3 when the token is rejected, saying how to set it', async () => {
    const r = await cli(['run', ...svc(1, 'benchmark'), '--target', 'echo', '--state-dir', stateDir], { EVAL_RUNNER_TOKEN: 'wrong' });
    assert.equal(r.code, 3);
    // Once, on stderr, with the CLI's next step; no summary of a run that never started.
    assert.match(r.stderr, /rejected the personal access token.*Set EVAL_RUNNER_TOKEN to a valid personal access token and try again\.\n$/s);
    assert.equal((r.stderr.match(/Set EVAL_RUNNER_TOKEN/g) ?? []).length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /Set a valid personal access token/);
    assert.equal(r.stdout, '');
  });

  it('exits 4 when the service is unreachable or the prompts are not ready in time', async () => {
    const late = await startSandbox({ port: 0, generationSeconds: 600 });
    const notReady = await cli(
      ['run', '--base-url', late.baseUrl, '--evaluation', '2', '--kind', 'robustness', '--target', 'echo', '--state-dir', stateDir, '--wait-for-generation', '1'],
      { EVAL_RUNNER_TOKEN: late.token },
    );
    const url = late.baseUrl;
    await late.close();
    assert.equal(notReady.code, 4);
    assert.match(notReady.stderr, /not ready within 1 s/);
    const gone = await cli(['prompts', '--base-url', url, '--evaluation', '1', '--kind', 'benchmark'], env);
    assert.equal(gone.code, 4);
    assert.match(gone.stderr, /Could not reach the service/);
  });

  it('names the other kind after a 404 when the evaluation exists there', async () => {
    const r = await cli(['run', ...svc(2, 'benchmark'), '--target', 'echo', '--state-dir', stateDir], env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /No benchmark evaluation with id 2.*use --kind robustness/s);
    const p = await cli(['prompts', ...svc(1, 'robustness')], env);
    assert.equal(p.code, 2);
    assert.match(p.stderr, /use --kind benchmark/);
  });

  it('drains on the first Ctrl-C and exits 130; a rerun finishes without redoing answers', async () => {
    const calls = join(stateDir, 'calls.log');
    const command = `echo x >> ${calls}; sleep 0.15; cat`;
    const args = ['run', ...svc(1, 'benchmark'), '--target', 'command', '--command', command, '--state-dir', stateDir, '--concurrency', '2'];
    // Ctrl-C once the target has been called (a fixed delay would fire before a slow start has its handler).
    const r = await cli(args, env, (child) => {
      const poll = setInterval(() => {
        if (existsSync(calls)) {
          clearInterval(poll);
          setTimeout(() => child.kill('SIGINT'), 200);
        }
      }, 20);
      child.once('exit', () => clearInterval(poll));
    });
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stderr, /Finishing the traces in flight/);
    // The figures on stdout, why it stopped on stderr.
    assert.match(r.stdout, /submitted \(\d+ now\)/);
    assert.match(r.stderr, /eval-runner run: The run was cancelled; every answer received so far is saved/);
    assert.doesNotMatch(r.stdout, /was cancelled/);
    const first = readFileSync(calls, 'utf8').split('\n').filter(Boolean).length;
    assert.ok(first < 25);
    const status = JSON.parse((await cli(['status', ...svc(1, 'benchmark'), '--state-dir', stateDir, '--json'])).stdout) as { counts: { submitted: number } };
    assert.equal(status.counts.submitted, first, 'every trace started before Ctrl-C was finished and saved');
    const rerun = await cli(args, env);
    assert.equal(rerun.code, 0);
    assert.equal(readFileSync(calls, 'utf8').split('\n').filter(Boolean).length, 25);
  });

  it('a first Ctrl-C ends the wait for generation too: exit 130 at once, not when the prompts come', async () => {
    const late = await startSandbox({ port: 0, generationSeconds: 600 });
    try {
      const args = ['run', '--base-url', late.baseUrl, '--evaluation', '2', '--kind', 'robustness', '--target', 'echo', '--state-dir', stateDir, '--wait-for-generation', '300'];
      const r = await cli(args, { EVAL_RUNNER_TOKEN: late.token }, (child) => {
        child.stderr!.on('data', (c: Buffer) => {
          if (c.toString('utf8').includes('Waiting for the adversarial prompts')) child.kill('SIGINT');
        });
      });
      assert.equal(r.code, 130, r.stderr);
      assert.match(r.stdout + r.stderr, /cancelled/);
    } finally {
      await late.close();
    }
  });

  it('submits one answer from a file byte for byte, and exports JSONL and CSV without the token', async () => {
    const answerFile = join(stateDir, 'answer.txt');
    writeFileSync(answerFile, '  exact\r\nbytes, "quoted"\n');
    const s = await cli(['submit', ...svc(1, 'benchmark'), '--trace', 'bench a+b&c=d%20/ü', '--answer-file', answerFile, '--state-dir', stateDir], env);
    assert.equal(s.code, 0, s.stderr);
    assert.equal(sandbox.answerOf(1, 'bench a+b&c=d%20/ü'), '  exact\r\nbytes, "quoted"\n');
    await cli(['run', ...svc(1, 'benchmark'), '--target', 'echo', '--state-dir', stateDir], env);
    const jsonl = await cli(['export', ...svc(1, 'benchmark'), '--format', 'jsonl', '--state-dir', stateDir]);
    const rows = jsonl.stdout.trim().split('\n').map((l) => JSON.parse(l) as { traceId: string; answer: string; state: string });
    assert.equal(rows.length, 25);
    assert.ok(rows.every((r) => r.state === 'submitted'));
    assert.equal(rows.find((r) => r.traceId === 'bench a+b&c=d%20/ü')!.answer, '  exact\r\nbytes, "quoted"\n');
    const out = join(stateDir, 'results.csv');
    const csv = await cli(['export', ...svc(1, 'benchmark'), '--format', 'csv', '--out', out, '--state-dir', stateDir]);
    assert.equal(csv.code, 0);
    const text = readFileSync(out, 'utf8');
    assert.ok(text.startsWith('traceId,prompt,answer,state,'));
    assert.ok(text.includes('"  exact\r\nbytes, ""quoted""\n"'));
    const journal = readFileSync(journalPath(stateDir, { origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1 }), 'utf8');
    for (const artifact of [journal, text, jsonl.stdout]) assert.ok(!artifact.includes(sandbox.token));
  });
});
