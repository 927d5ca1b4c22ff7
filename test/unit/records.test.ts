import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

interface StatusJson {
  total: number;
  counts: Record<string, number>;
  runs: Array<{ runId: string; target: string; answered: number; submitted: number }>;
}

// A record changes only when something happened: a refused submission, a run that could not start and a command
// run from another folder leave the journal as it was (issue "The truth on every screen", item 1).
describe('records change only when something happened (CLI against the sandbox)', function () {
  this.timeout(60_000);
  const TRACES = 12;
  let sandbox: Sandbox;
  let stateDir: string;
  let env: Record<string, string>;
  const svc = () => ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  const status = async () => JSON.parse((await cli(['status', ...svc(), '--json'], env)).stdout) as StatusJson;
  const journalText = () => readFileSync(journalPath(stateDir, { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 }), 'utf8');

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, maxBodyBytes: 100_000 });
    stateDir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
    assert.equal((await cli(['run', ...svc(), '--target', 'echo'], env)).code, 0);
  });
  afterEach(() => sandbox.close());

  it('a submission refused for a trace the service does not have records nothing: status, export and the journal stay as they were', async () => {
    const before = journalText();
    const r = await cli(['submit', ...svc(), '--trace', 'no-such-trace', '--answer', 'hello'], env);
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /no such evaluation, trace or route/);
    assert.ok(journalText() === before, 'the journal is unchanged');
    const s = await status();
    assert.equal(s.total, TRACES);
    assert.equal(s.counts.submitted, TRACES);
    const exported = await cli(['export', ...svc(), '--format', 'jsonl'], env);
    assert.equal(exported.stdout.trim().split('\n').length, TRACES, 'no row for the refused trace');
  });

  it('a refused answer for a listed trace is not kept as its answer (the next run never resubmits it)', async () => {
    const before = journalText();
    const r = await cli(['submit', ...svc(), '--trace', 'bench-0003', '--answer-file', '-'], env, undefined, 'x'.repeat(200_000));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /too large/);
    assert.ok(journalText() === before, 'the journal is unchanged');
  });

  for (const [what, file, extra] of [
    ['a syntax error', 'def answer(prompt:\n', []],
    ['a misspelt function', 'def answer(prompt, context=None):\n    return prompt\n', ['--python-function', 'answr']],
    ['a missing interpreter', 'def answer(prompt, context=None):\n    return prompt\n', ['--python', 'python9-not-here']],
  ] as const) {
    it(`a --fresh run that cannot start (${what}) records no run and resets nothing`, async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'model.py'), file);
      const before = journalText();
      const r = await cli(['run', ...svc(), '--target', 'python', '--python-file', join(dir, 'model.py'), ...extra, '--fresh'], env);
      assert.notEqual(r.code, 0, r.stdout);
      assert.ok(journalText() === before, 'the journal is unchanged');
      const s = await status();
      assert.equal(s.runs.length, 1, 'no run entry');
      assert.equal(s.counts.submitted, TRACES, 'no reset');
    });
  }

  it("an exception the user's code raises is that prompt's answer: not retried, unless --target-retries asks", async () => {
    const dir = tempDir();
    const calls = join(dir, 'calls.log');
    writeFileSync(join(dir, 'model.py'), `def answer(prompt, context=None):\n    open(${JSON.stringify(calls)}, 'a').write('x\\n')\n    raise ValueError('no answer for this one')\n`);
    const python = ['--target', 'python', '--python-file', join(dir, 'model.py'), '--fresh', '--limit', '3'];
    const count = () => readFileSync(calls, 'utf8').split('\n').filter(Boolean).length;
    const once = await cli(['run', ...svc(), ...python], env);
    assert.equal(once.code, 1, once.stderr);
    assert.equal(count(), 3, 'one call per trace');
    assert.match(once.stdout, /failed: .*ValueError: no answer for this one\n/);
    const retried = await cli(['run', ...svc(), ...python, '--target-retries', '2'], env);
    assert.equal(retried.code, 1, retried.stderr);
    assert.equal(count(), 3 + 3 * 3, 'three calls per trace when asked');
  });

  it("a python target's identity does not depend on the folder the command is run from; another file's content is named as the difference", async () => {
    const dir = tempDir();
    const file = join(dir, 'model.py');
    writeFileSync(file, 'def answer(prompt, context=None):\n    return prompt.upper()\n');
    const python = ['--target', 'python', '--python-file', file];
    assert.equal((await cli(['run', ...svc(), ...python, '--fresh'], env)).code, 0);
    const elsewhere = join(tempDir(), 'deeper', 'still');
    mkdirSync(elsewhere, { recursive: true });
    const again = await cli(['run', ...svc(), ...python], env, undefined, undefined, elsewhere);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /Nothing to do/);
    writeFileSync(file, 'def answer(prompt, context=None):\n    return prompt.lower()\n');
    const changed = await cli(['run', ...svc(), ...python], env);
    assert.equal(changed.code, 2);
    assert.match(changed.stderr, /What differs from run \S+: file's content: [0-9a-f]{6} → [0-9a-f]{6}\./);
  });
});
