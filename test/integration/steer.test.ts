import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestHandles } from '../../src/extension/main';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import { runActionItems } from '../../src/extension/runs/runMenu';
import { listedEvaluation } from './listedEvaluation';
import type { ListedEvaluation } from './listedEvaluation';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const CLI = join(__dirname, '..', '..', '..', 'dist', 'cli.js');

// A run started by `eval-runner run` in a terminal, after this window opened: the window finds it, follows it, and
// steers it from Run Details' buttons through the page's checked messages.
describe('steering from Run Details a run the CLI started', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  let listed: ListedEvaluation;
  const refOf = (): EvaluationRef => listed.refOf();

  before(async () => {
    listed = await listedEvaluation('Steered from the CLI');
    ({ api, sandbox } = listed);
  });
  after(() => listed.close());

  it('pauses it (no target call while paused), says so, resumes it, and the run finishes', async () => {
    // The window has stopped looking for runs going on at its start: this run is found because its journal changed.
    await until('the window stopped looking for runs at its start', () => !api.runs.lookingForRuns, 30_000);
    const ref = refOf();
    const session = api.ctx.registry.session(ref);
    const calls = join(mkdtempSync(join(tmpdir(), 'eval-runner-it-')), 'calls.log');
    const count = () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0);
    // Each answer takes 0.4 s, one at a time, and leaves a line: the target's calls are counted.
    const args = [CLI, 'run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--target', 'command', '--command', `echo x >> '${calls}'; sleep 0.4; cat`];
    const exited = new Promise<{ code: number; stderr: string }>((resolve) => {
      // Asynchronously: the sandbox answering the CLI lives in this same extension host.
      execFile(process.execPath, [...args, '--concurrency', '1', '--state-dir', api.ctx.settings.stateDir], { env: { ...process.env, EVAL_RUNNER_TOKEN: sandbox.token } }, (error, _out, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
      );
    });
    await until('the window follows the CLI run', () => session.isRunning, 30_000);
    api.panels.open(ref);
    const panel = api.panels.find(ref.id)!;
    const receive = (raw: unknown) => (panel as unknown as { receiveRaw(raw: unknown): void }).receiveRaw(raw);
    await until('Run Details shows the run going on', () => panel.lastProgress?.running === true);
    assert.ok(session.store.counts.submitted < 20, 'the run was early on when paused');

    receive({ type: 'steer', action: 'pause' });
    await until('Run Details says the run is paused', () => panel.lastProgress?.paused === true, 20_000);
    assert.ok(runActionItems(api.ctx, ref).some((i) => i.command === 'evalRunner.resumeRun'), "the status bar's menu offers Resume");
    // A call leaves its line as it starts: the one in flight at the pause is counted already.
    const atPause = count();
    // The run is left paused for a while: the target is asked nothing meanwhile, and the run goes on.
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(count(), atPause, 'no target call while paused');
    assert.ok(session.isRunning, 'a paused run goes on');
    assert.ok(atPause < 25);

    receive({ type: 'steer', action: 'resume' });
    await until('Run Details says the run goes on', () => panel.lastProgress?.paused === false || panel.lastProgress?.running === false, 20_000);
    const { code, stderr } = await exited;
    assert.equal(code, 0, stderr);
    assert.equal(count(), 25, 'the target was asked once per trace');
    for (const id of session.store.traces.keys()) assert.equal(sandbox.submissionsOf(1, id), 1, `${id} submitted once`);
    await until('the window read the whole run', () => session.store.counts.submitted === 25);
    const steers = session.runs.at(-1)!.steers ?? [];
    assert.deepEqual(steers.map((s) => s.ev), ['pause', 'resume'], "the run's history has its steers");
  });
});
