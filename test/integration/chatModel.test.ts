import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { TargetError } from '../../src/core/targets/target';
import { createLmTarget } from '../../src/extension/lmTarget';
import type { TestHandles } from '../../src/extension/main';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const MODEL = 'eval-runner-test-model';
const seen = () =>
  (globalThis as unknown as { __evalRunnerTestChatModel: { requests: number; extensions: string[]; refuse: boolean } }).__evalRunnerTestChatModel;

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
    sandbox = await startSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 6 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'vscode-lm', model: MODEL }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await until('the target is read', () => api.ctx.settings.target.type === 'vscode-lm');
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
  });
  after(async () => {
    for (const key of ['target', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('runs an evaluation through the chat model: every answer from it, its token counts kept with the run', async () => {
    const before = seen().requests;
    const summary = await api.runs.run(ref());
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
});
