import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { TargetError } from '../../src/core/targets/target';
import { createLmTarget } from '../../src/extension/targets/lmTarget';
import type { TestHandles } from '../../src/extension/main';
import { isAlive, liveRunner } from '../../src/protocol/runnerFiles';
import type { RunnerFile } from '../../src/protocol/runnerFiles';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const MODEL = 'eval-runner-test-model';
const seen = () =>
  (globalThis as unknown as { __evalRunnerTestChatModel: { requests: number; extensions: string[]; refuse: boolean; delayMs: number } }).__evalRunnerTestChatModel;

describe('the vscode-lm target against a real chat model (a test extension on the chatProvider API)', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Chat model';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;

  before(async function () {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    await vscode.extensions.getExtension('eval-runner-test.chat-model')!.activate();
    const deadline = Date.now() + 20_000;
    while ((await vscode.lm.selectChatModels({ id: MODEL })).length === 0) {
      if (Date.now() > deadline) throw new Error('the test chat model never registered');
      await new Promise((r) => setTimeout(r, 100));
    }
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 6 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'vscode-lm', model: MODEL }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await until('the target is read', () => api.ctx.settings.target.type === 'vscode-lm');
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
  });
  after(async () => {
    for (const key of ['target', 'baseUrl', 'evaluations', 'concurrency']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('runs an evaluation through the chat model in a runner process: every answer from it, its token counts kept with the run', async () => {
    const before = seen().requests;
    const running = api.runs.run(ref());
    // The run is in a process of its own (a runner file beside the journal names it); this window serves its model.
    const journal = api.ctx.registry.session(ref()).journalFile;
    let runner: RunnerFile | undefined;
    await until('the runner is started', () => (runner = liveRunner(journal)) !== undefined);
    assert.notEqual(runner!.pid, process.pid);
    const summary = await running;
    assert.equal(summary?.outcome, 'completed', summary?.message);
    assert.equal(seen().requests - before, 6);
    assert.ok(seen().extensions.every((e) => e.toLowerCase() === 'eval-runner.eval-runner'), 'the requests name Eval Runner');
    const session = api.ctx.registry.session(ref());
    for (const t of session.store.traces.values()) assert.equal(sandbox.answerOf(1, t.traceId), t.prompt!.toUpperCase());
    const run = session.runs[session.runs.length - 1]!;
    assert.equal(run.target, `vscode-lm: ${MODEL}`);
    assert.ok(run.usageReported === 6 && run.promptTokens > 0 && run.completionTokens === run.promptTokens, JSON.stringify(run));
  });

  it('stops the run, naming the model, when access to it is refused (the consent denied), instead of failing each trace', async () => {
    const target = createLmTarget(MODEL);
    await assert.rejects(
      target.send('Please REFUSE this one.', { signal: new AbortController().signal, timeoutMs: 10_000 }),
      (error: unknown) =>
        error instanceof TargetError && error.kind === 'failed' && error.details.stopsRun === true && /^Permission to use Eval Runner test model was not given/.test(error.message),
    );
    const submissions = sandbox.stats.submissions;
    seen().refuse = true;
    try {
      const summary = await api.runs.run(ref(), { mode: 'fresh' });
      assert.equal(summary?.outcome, 'error');
      assert.match(summary?.message ?? '', /Permission to use Eval Runner test model was not given: .* The run stopped; answers so far are saved\./);
      assert.equal(sandbox.stats.submissions, submissions, 'nothing submitted');
      assert.equal(api.ctx.registry.session(ref()).store.counts.failed, 0, 'no trace marked failed: the run stopped');
    } finally {
      seen().refuse = false;
    }
  });

  it('cancels a request in flight: the cancel ends the call, whatever the provider does', async () => {
    const target = createLmTarget(MODEL);
    const controller = new AbortController();
    const requestsBefore = seen().requests;
    // The model waits 60 s and the call's deadline is 30 s: an AbortError (not a time-out TargetError, and
    // no answer) means the cancel itself ended the call.
    const call = target.send('A SLOW prompt.', { signal: controller.signal, timeoutMs: 30_000 });
    await until('the request reached the model', () => seen().requests > requestsBefore);
    controller.abort();
    await assert.rejects(call, (error: unknown) => (error as Error).name === 'AbortError' && !(error instanceof TargetError));
    // VS Code 1.100 does not forward a cancellation to the provider once the response has started streaming
    // (the request's RPC has returned by then): the target must not wait for the provider, and does not.
  });

  // Last: the window reloads (the extension disposed and activated again, as Developer: Reload Window does).
  it('a run whose window reloads goes on: the reloaded window serves the chat model, and the reload is in the run\'s history', async () => {
    await config().update('concurrency', 1, G);
    seen().delayMs = 300;
    try {
      const before = seen().requests;
      // The earlier tests submitted each trace once: this run answers each again (fresh), and submits it once more.
      const submittedBefore = new Map([...api.ctx.registry.session(ref()).store.traces.keys()].map((id) => [id, sandbox.submissionsOf(1, id)]));
      assert.equal(submittedBefore.size, 6);
      const running = api.runs.run(ref(), { mode: 'fresh' });
      await until('the run is in a runner process', () => liveRunner(api.ctx.registry.session(ref()).journalFile) !== undefined);
      const runner = liveRunner(api.ctx.registry.session(ref()).journalFile)!;
      const start = sandbox.stats.submissions;
      await until('a few answers are submitted', () => sandbox.stats.submissions >= start + 2);
      const submissions = sandbox.stats.submissions;
      api = api.restart();
      await running;
      const session = api.ctx.registry.session(ref());
      await until('the reloaded window follows the run', () => session.isRunning, 10_000);
      await until('the run ends', () => !session.isRunning, 30_000);
      assert.ok(submissions < sandbox.stats.submissions, 'the run was still going on at the reload');
      assert.equal(session.lastSummary?.outcome, 'completed', session.lastSummary?.message);
      for (const t of session.store.traces.values()) {
        assert.equal(sandbox.submissionsOf(1, t.traceId), submittedBefore.get(t.traceId)! + 1, `${t.traceId} submitted once in this run`);
        assert.equal(sandbox.answerOf(1, t.traceId), t.prompt!.toUpperCase());
      }
      // A call in flight at the reload is asked again in the reloaded window: at most one more request.
      assert.ok(seen().requests - before <= 7, `${seen().requests - before} requests for 6 traces`);
      const run = session.runs[session.runs.length - 1]!;
      assert.deepEqual(run.windows && { attached: run.windows.attached, detached: run.windows.detached }, { attached: 1, detached: 1 });
      await until('the runner leaves', () => !isAlive(runner.pid), 10_000);
    } finally {
      seen().delayMs = 0;
    }
  });
});
