import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import type { TreeNode } from '../../src/extension/evaluations/treeModel';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

describe('Approve and Submit on a group of Responded answers', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Approve bench';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;
  const session = () => api.ctx.registry.session(ref());
  const trace = (id: string): TreeNode => ({ kind: 'trace', ref: ref(), trace: session().store.get(id)! });
  /** Answers the confirmation: the titles it showed are kept; `accept` picks its first item (Approve and Submit N). */
  const confirmations: string[] = [];
  const answerConfirmation = (accept: boolean) => {
    api.ctx.pickItem = (<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions) => {
      confirmations.push(`${options.title ?? ''} | ${items.map((i) => i.label).join(' | ')}`);
      return Promise.resolve(accept ? items[0] : undefined);
    });
  };

  let originalPick: TestHandles['ctx']['pickItem'];

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    originalPick = api.ctx.pickItem;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 6 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'echo' }, G);
    await config().update('reviewBeforeSubmit', true, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
    await api.runs.run(ref());
    assert.equal(session().store.counts.answered, 6, 'every answer kept as Responded');
    assert.equal(sandbox.stats.submissions, 0);
  });
  after(async () => {
    api.ctx.pickItem = originalPick;
    for (const key of ['target', 'baseUrl', 'evaluations', 'reviewBeforeSubmit']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('asks first, naming how many, and sends nothing when declined', async () => {
    const group = api.tree.getChildren({ kind: 'evaluation', ref: ref() }).find((n) => n.kind === 'group' && n.state === 'answered');
    assert.ok(group, 'a Responded group');
    answerConfirmation(false);
    await vscode.commands.executeCommand('evalRunner.approveAndSubmit', group);
    assert.match(confirmations.pop()!, /^Submit 6 Responded answer\(s\) of Approve bench to the service\? \| .*Approve and Submit 6 Answer\(s\) \| Cancel$/);
    assert.equal(sandbox.stats.submissions, 0);
    assert.equal(session().store.counts.answered, 6);
  });

  it('submits a multi-selection of traces, and only those', async () => {
    const ids = [...session().store.traces.keys()];
    const picked = [trace(ids[1]!), trace(ids[3]!)];
    answerConfirmation(true);
    await vscode.commands.executeCommand('evalRunner.approveAndSubmit', picked[0], picked);
    assert.match(confirmations.pop()!, /^Submit 2 Responded answer\(s\)/);
    assert.equal(sandbox.stats.submissions, 2);
    for (const id of [ids[1]!, ids[3]!]) {
      assert.equal(session().store.get(id)!.state, 'submitted', id);
      assert.equal(sandbox.answerOf(1, id), session().store.get(id)!.answer, `${id}: the journaled answer, as it is`);
    }
    assert.equal(session().store.counts.answered, 4);
  });

  it("submits the whole Responded group through the session's submit, each once, and the group goes", async () => {
    const group = api.tree.getChildren({ kind: 'evaluation', ref: ref() }).find((n) => n.kind === 'group' && n.state === 'answered')!;
    answerConfirmation(true);
    await vscode.commands.executeCommand('evalRunner.approveAndSubmit', group);
    assert.match(confirmations.pop()!, /^Submit 4 Responded answer\(s\)/);
    assert.equal(sandbox.stats.submissions, 6, 'the four left, none twice');
    assert.equal(session().store.counts.submitted, 6);
    assert.equal(session().store.counts.answered, 0);
    for (const id of session().store.traces.keys()) assert.equal(sandbox.answerOf(1, id), session().store.get(id)!.answer, id);
    const groups = api.tree.getChildren({ kind: 'evaluation', ref: ref() });
    assert.ok(!groups.some((n) => n.kind === 'group' && n.state === 'answered'), 'no Responded group left');
    await until('the sandbox completes the evaluation', () => sandbox.summary(1)!.state === 'Completed');
  });
});
