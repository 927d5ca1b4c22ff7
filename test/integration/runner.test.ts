import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import { isAlive, liveRunner, RUNNER_PROTOCOL_VERSION, runnerFilePath } from '../../src/protocol/runnerFiles';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

// Runs started in the editor go on in a runner process of their own: a window reload (here the extension disposed
// and activated again on the same storage, as Developer: Reload Window does) neither stops nor loses them.
describe('runs in a runner process: a window reload does not stop them, and the reloaded window follows them', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  let calls: string;
  const label = 'Runner test';
  const refOf = (): EvaluationRef => api.ctx.registry.refs.find((r) => r.label === label)!;

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
  });
  beforeEach(async () => {
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0 });
    calls = join(mkdtempSync(join(tmpdir(), 'eval-runner-it-')), 'calls.log');
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label }], G);
    // Each answer takes 0.3 s and leaves a line: the target's calls are counted across the reload.
    await config().update('target', { type: 'command', command: `echo x >> '${calls}'; sleep 0.3; cat` }, G);
    await config().update('concurrency', 2, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === label));
    await api.ctx.tokens.set(refOf().origin, sandbox.token);
  });
  afterEach(async () => {
    for (const key of ['baseUrl', 'evaluations', 'target', 'concurrency']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('a run whose window reloads finishes: every trace submitted once, the target asked once per trace, and the reloaded window shows it', async () => {
    const running = vscode.commands.executeCommand('evalRunner.runEvaluation', refOf().id);
    await until('a few answers are submitted', () => sandbox.stats.submissions >= 4);
    const runner = liveRunner(api.ctx.registry.session(refOf()).journalFile);
    assert.ok(runner, 'the run is in a runner process');
    assert.notEqual(runner.pid, process.pid);
    api = api.restart();
    await running;
    const session = api.ctx.registry.session(refOf());
    await until('the reloaded window follows the run', () => session.isRunning, 10_000);
    assert.ok(sandbox.stats.submissions < 25, 'the run was still going on at the reload');
    await until('the run ends', () => !session.isRunning, 30_000);
    assert.equal(session.store.counts.submitted, 25, JSON.stringify(session.lastSummary?.message));
    assert.equal(session.lastSummary?.outcome, 'completed');
    for (const id of session.store.traces.keys()) assert.equal(sandbox.submissionsOf(1, id), 1, `${id} submitted once`);
    assert.equal(readFileSync(calls, 'utf8').split('\n').filter(Boolean).length, 25, 'the target was asked once per trace');
    assert.equal(session.runs.length, 1, 'one run');
    await until('the runner leaves', () => !isAlive(runner.pid), 10_000);
  });

  it('a window that opens before the run\'s runner has said where it listens finds the run once it does', async () => {
    const running = vscode.commands.executeCommand('evalRunner.runEvaluation', refOf().id);
    await until('a few answers are submitted', () => sandbox.stats.submissions >= 2);
    // As a reload just after Run leaves it: the runner is there, its file not yet.
    const file = runnerFilePath(api.ctx.registry.session(refOf()).journalFile);
    const aside = `${file}.aside`;
    renameSync(file, aside);
    try {
      api = api.restart();
      await running;
      const session = api.ctx.registry.session(refOf());
      assert.equal(session.isRunning, false, 'nothing to follow at activation');
      renameSync(aside, file);
      await until('the window finds the run', () => session.isRunning, 10_000);
      await until('the run ends', () => !session.isRunning, 30_000);
      assert.equal(session.lastSummary?.outcome, 'completed');
      assert.equal(session.store.counts.submitted, 25);
    } finally {
      if (existsSync(aside)) renameSync(aside, file);
    }
  });

  it('a window that could not attach to a run going on tries again, and follows it', async () => {
    const running = vscode.commands.executeCommand('evalRunner.runEvaluation', refOf().id);
    await until('a few answers are submitted', () => sandbox.stats.submissions >= 2);
    const file = runnerFilePath(api.ctx.registry.session(refOf()).journalFile);
    const real = readFileSync(file, 'utf8');
    // The runner's file names a socket the window refuses: its first attempt fails, as one that met a dying runner.
    writeFileSync(file, JSON.stringify({ ...(JSON.parse(real) as object), socket: '/nowhere/s' }));
    try {
      api = api.restart();
      await running;
      const session = api.ctx.registry.session(refOf());
      await until('the first attempt fails', () => !session.isRunning, 10_000);
      writeFileSync(file, real);
      await until('the window attaches again', () => session.isRunning, 10_000);
      await until('the run ends', () => !session.isRunning, 30_000);
      assert.equal(session.lastSummary?.outcome, 'completed');
      assert.equal(session.store.counts.submitted, 25);
    } finally {
      if (existsSync(file)) writeFileSync(file, real);
    }
  });

  it('a run in a runner of another Eval Runner version is named to the user with what to do, not skipped without a word', () => {
    const journal = api.ctx.registry.session(refOf()).journalFile;
    mkdirSync(dirname(journal), { recursive: true, mode: 0o700 });
    // As an update leaves it: a live process of this user's, speaking another version of the protocol.
    const other = { version: RUNNER_PROTOCOL_VERSION + 1, pid: process.pid, socket: '/nowhere/s', secret: 'ab', startedAt: Date.now() };
    writeFileSync(runnerFilePath(journal), JSON.stringify(other), { mode: 0o600 });
    try {
      api = api.restart();
      assert.deepEqual(api.runs.otherRunners, [`A run of ${label} is in progress in a runner of another Eval Runner version (pid ${process.pid}): wait for it to end, or stop it.`]);
      assert.equal(api.ctx.registry.session(refOf()).isRunning, false, 'not attached to');
    } finally {
      rmSync(runnerFilePath(journal), { force: true });
    }
  });

  it('a runner whose hello speaks another version (its file said ours) is named with what to do, not as a failed run', async () => {
    const journal = api.ctx.registry.session(refOf()).journalFile;
    mkdirSync(dirname(journal), { recursive: true, mode: 0o700 });
    // A listener that answers the hello in another version of the protocol, as a runner of another Eval Runner would.
    const socket = join(mkdtempSync(join(tmpdir(), 'evr-')), 's');
    const server = createServer((s) => {
      s.on('error', () => undefined);
      s.once('data', (d) => {
        const id = (JSON.parse(d.toString().split('\r\n\r\n')[1]!) as { id: number }).id;
        const body = JSON.stringify({ jsonrpc: '2.0', id, result: { version: RUNNER_PROTOCOL_VERSION + 1, pid: process.pid, nonce: 'a'.repeat(64), proof: 'b'.repeat(64) } });
        s.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    const file = { version: RUNNER_PROTOCOL_VERSION, pid: process.pid, socket, secret: 'ab'.repeat(32), startedAt: Date.now() };
    writeFileSync(runnerFilePath(journal), JSON.stringify(file), { mode: 0o600 });
    try {
      api = api.restart();
      await until('the window names the other runner', () => api.runs.otherRunners.length > 0, 10_000);
      assert.deepEqual(api.runs.otherRunners, [`A run of ${label} is in progress in a runner of another Eval Runner version (pid ${process.pid}): wait for it to end, or stop it.`]);
      assert.equal(api.ctx.registry.session(refOf()).isRunning, false, 'not attached to');
    } finally {
      rmSync(runnerFilePath(journal), { force: true });
      server.close();
    }
  });

  it('Cancel from the reloaded window ends the run: the answers so far are kept, the runner leaves', async () => {
    const running = vscode.commands.executeCommand('evalRunner.runEvaluation', refOf().id);
    await until('a few answers are submitted', () => sandbox.stats.submissions >= 2);
    const runner = liveRunner(api.ctx.registry.session(refOf()).journalFile)!;
    api = api.restart();
    await running;
    const session = api.ctx.registry.session(refOf());
    await until('the reloaded window follows the run', () => session.isRunning, 10_000);
    await vscode.commands.executeCommand('evalRunner.cancelRun', refOf().id);
    await until('the run ends', () => !session.isRunning, 20_000);
    assert.equal(session.lastSummary?.outcome, 'cancelled');
    assert.ok(sandbox.stats.submissions < 25, 'cancelled before the end');
    await until('the runner leaves', () => !isAlive(runner.pid), 10_000);
    assert.equal(liveRunner(session.journalFile), undefined);
    const submitted = session.store.counts.submitted;
    assert.ok(submitted >= 2, `the answers submitted so far are kept (${submitted})`);
  });

  it('Run pressed twice at once starts one run, which the window follows (and can cancel) to its end', async () => {
    const session = api.ctx.registry.session(refOf());
    const first = vscode.commands.executeCommand('evalRunner.runEvaluation', refOf().id);
    await vscode.commands.executeCommand('evalRunner.runEvaluation', refOf().id);
    await until('a few answers are submitted', () => sandbox.stats.submissions >= 2);
    assert.ok(session.isRunning, 'the window still follows the run');
    await first;
    assert.equal(session.lastSummary?.outcome, 'completed');
    assert.equal(session.runs.length, 1, 'one run');
    assert.equal(readFileSync(calls, 'utf8').split('\n').filter(Boolean).length, 25, 'the target was asked once per trace');
  });
});
