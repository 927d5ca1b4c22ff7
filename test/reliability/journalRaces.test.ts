import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

/** A pid that belonged to a process which has exited: what a SIGKILLed run leaves in its lock. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('journal: a stale lock taken over by two runs at once, and hand-edited lines', function () {
  this.timeout(120_000);

  it('lets exactly one of two runs started together take over a stale lock (8 tries)', async () => {
    const traces = 60;
    // The sandbox's echo model is the target: it counts calls per prompt. 20 ms each keeps both runs overlapping.
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: traces, evaluationSeconds: 0, modelLatencyMs: 20 });
    const env = { EVAL_RUNNER_TOKEN: sandbox.token, MODEL_KEY: 'unused' };
    try {
      for (let attempt = 0; attempt < 8; attempt++) {
        const stateDir = tempDir();
        const path = journalPath(stateDir, { origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1 });
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(`${path}.lock`, String(deadPid()));
        const callsBefore = sandbox.stats.modelCalls;
        const submissionsBefore = sandbox.stats.submissions;
        const args = ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir,
          '--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'echo', '--api-key-env', 'MODEL_KEY'];
        const [a, b] = await Promise.all([cli(args, env), cli(args, env)]);
        const codes = [a.code, b.code].sort();
        const refused = [a, b].find((r) => r.code === 2);
        assert.deepEqual(codes, [0, 2], `try ${attempt}: exit codes ${a.code} and ${b.code}\n${a.stderr}\n${b.stderr}`);
        assert.match(refused!.stderr, /Another Eval Runner process \(pid \d+\) is running this evaluation/);
        assert.equal(sandbox.stats.modelCalls - callsBefore, traces, `try ${attempt}: one target call per trace`);
        assert.equal(sandbox.stats.submissions - submissionsBefore, traces, `try ${attempt}: one submission per trace`);
      }
    } finally {
      await sandbox.close();
    }
  });

  it('never submits from a journal line of the wrong shape, and counts such lines in run and status', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 4, evaluationSeconds: 0 });
    const stateDir = tempDir();
    const path = journalPath(stateDir, { origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1 });
    mkdirSync(dirname(path), { recursive: true });
    const lines = [
      { t: 'answer', id: 'bench-0000', a: null, at: 1 }, // an answer of null would be submitted as "null"
      { t: 'answer', a: 'orphan', at: 1 }, // no trace id: would be submitted as trace "undefined"
      { t: 'submitted', id: 'bench-0002' }, // no time: not a record Eval Runner writes
      { t: 'answer', id: 'bench-0003', a: 'kept from the journal', at: 1 },
    ];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token };
    try {
      const run = await cli(['run', ...svc, '--target', 'echo'], env);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /Note: 3 line\(s\) of the journal .* are unreadable or not a record Eval Runner wrote/);
      const prompts = new Map(seedPrompts('benchmark', 4).map((p) => [p.traceId, p.content]));
      assert.equal(sandbox.answerOf(1, 'bench-0000'), prompts.get('bench-0000'), 'answered by the target, not "null"');
      assert.equal(sandbox.answerOf(1, 'bench-0002'), prompts.get('bench-0002'), 'not taken as submitted');
      assert.equal(sandbox.answerOf(1, 'bench-0003'), 'kept from the journal');
      assert.equal(sandbox.stats.requests.get('POST /api/evaluation/response'), 4, 'no submission for a trace "undefined"');
      const status = await cli(['status', ...svc, '--json'], env);
      assert.equal((JSON.parse(status.stdout) as { invalidLines: number }).invalidLines, 3);
      const text = await cli(['status', ...svc], env);
      assert.match(text.stdout, /3 line\(s\) of the journal/);
    } finally {
      await sandbox.close();
    }
  });
});
