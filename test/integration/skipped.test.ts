import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { labelText, until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

describe('skipped traces in the editor: said in the tree and Run Details, Submit as Not Answered', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Skip bench';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;
  const session = () => api.ctx.registry.session(ref());

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 8 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'echo' }, G);
    await config().update('skippedAnswer', 'Left out on purpose: {reason}', G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
  });
  after(async () => {
    for (const key of ['target', 'baseUrl', 'evaluations', 'skippedAnswer']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('a run leaves the skipped trace unanswered and the tree says why it matters; Submit as Not Answered sends the reason', async () => {
    await vscode.commands.executeCommand('evalRunner.fetchPrompts', ref().id);
    await session().skip('bench-0004', 'needs a human reviewer');
    await api.runs.run(ref());
    assert.equal(session().store.counts.skipped, 1);
    const groups = api.tree.getChildren({ kind: 'evaluation', ref: ref() });
    const skipped = groups.map((g) => api.tree.getTreeItem(g)).find((i) => labelText(i.label).startsWith('Skipped'));
    assert.ok(skipped, 'a Skipped group');
    assert.match(String(skipped.description), /the service cannot complete the evaluation while these are unanswered/);
    assert.equal(sandbox.answerOf(1, 'bench-0004'), undefined);

    await vscode.commands.executeCommand('evalRunner.submitSkipped', ref().id);
    assert.equal(sandbox.answerOf(1, 'bench-0004'), 'Left out on purpose: needs a human reviewer');
    assert.equal(session().store.counts.skipped, 0);
    assert.equal(session().store.get('bench-0004')!.notAnswered, true);
    await until('the sandbox completes the evaluation', () => sandbox.summary(1)!.state === 'Completed');
  });
});
