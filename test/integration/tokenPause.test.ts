import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

describe('a token revoked mid-run pauses the run in the editor; a new token lets the same run go on', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
  });
  after(async () => {
    // A failed test must not leave its run waiting for a token in a runner process.
    for (const ref of api.ctx.registry.refs) api.ctx.registry.session(ref).cancel(true);
    for (const key of ['baseUrl', 'evaluations', 'target', 'concurrency']) await config().update(key, undefined, G);
    await sandbox?.close();
  });

  it('holds the answers journaled, says so in the status bar words, and goes on with the new token: each trace submitted once', async () => {
    let revoked = false;
    const original = 'the-first-token';
    sandbox = await freshSandbox({
      port: 0,
      evaluationSeconds: 0,
      token: original,
      // After 5 submissions the first token stops working and only the new one is taken (passed on to the sandbox's
      // own check as the token it knows).
      intercept: (req, res) => {
        if (req.method !== 'POST') return false;
        if (!revoked && sandbox.stats.submissions >= 5) revoked = true;
        if (!revoked) return false;
        if (req.headers.authorization === 'Bearer the-new-token') {
          req.headers.authorization = `Bearer ${original}`;
          return false;
        }
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":"req_1","message":"Token revoked","data":null,"success":false}');
        return true;
      },
    });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: 'Token pause test' }], G);
    await config().update('target', { type: 'echo' }, G);
    await config().update('concurrency', 2, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === 'Token pause test'));
    const ref = api.ctx.registry.refs.find((r) => r.label === 'Token pause test')!;
    await api.ctx.tokens.set(ref.origin, original);
    const session = api.ctx.registry.session(ref);

    const running = api.runs.run(ref);
    await until('the run is paused for a token', () => session.lastProgress?.hold?.kind === 'token');
    assert.ok(session.isRunning, 'paused, not ended');
    // The runner's progress says so (the window reads the journal of a run it follows only while it shows its traces).
    await until('answers are journaled and wait', () => (session.lastProgress?.counts.answered ?? 0) > 0);
    assert.equal(session.lastProgress?.counts.failed, 0);

    await api.ctx.tokens.set(ref.origin, 'the-new-token');
    const summary = await running;
    assert.equal(summary?.outcome, 'completed', summary?.message);
    assert.equal(session.store.counts.submitted, 25);
    for (const id of session.store.traces.keys()) assert.equal(sandbox.submissionsOf(1, id), 1, `${id} submitted once`);
    assert.deepEqual(summary.holds.map((h) => h.kind), ['token']);
    assert.equal(session.runs.length, 1, 'the same run went on');
  });
});
