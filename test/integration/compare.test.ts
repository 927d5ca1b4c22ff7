import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { CompareRow } from '../../src/webview/protocol';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const TRACES = 2_500;

describe('Compare Runs of a large evaluation: the page gets windows of the rows', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Wide compare';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;
  const session = () => api.ctx.registry.session(ref());

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: TRACES });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'echo' }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
    await api.runs.run(ref());
    assert.equal(session().store.counts.submitted, TRACES);
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const key of ['target', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it(`at ${TRACES.toLocaleString('en-US')} traces the page asks for and gets the rows it shows, filtered on the host`, async () => {
    const all = [...session().store.traces.keys()];
    // A second run of two traces: the other traces were answered by the first run only, so they differ.
    await api.runs.run(ref(), { subset: { ids: all.slice(0, 2) } });
    const runs = session().runs;
    assert.equal(runs.length, 2);
    const [a, b] = [runs[0]!, runs[1]!];
    await api.compare.compare(ref(), a, b);
    const panel = api.compare.findRuns(ref().id, a.runId, b.runId)!;
    await until('the page asked for its first rows and got them', () => panel.lastView !== undefined);
    const view = panel.lastView!;
    assert.equal(view.total, TRACES);
    assert.equal(view.length, TRACES - 2, 'only the differing traces: the page’s default filter, applied on the host');
    assert.equal(view.start, 0);
    assert.ok(view.rows.length > 0 && view.rows.length <= 300, `a window of rows, not ${TRACES}: ${view.rows.length}`);
    assert.deepEqual(
      view.rows.map((r) => r[CompareRow.TraceId]),
      all.slice(2, 2 + view.rows.length),
    );
    assert.equal(view.rows[0]![CompareRow.AnswerB], null, 'the second run did not answer it');
    // The host keeps every row: a diff or a submit works on a trace the page never got.
    const far = all[TRACES - 1]!;
    assert.equal(panel.answerOf(ref().id, a.runId, far), session().store.get(far)!.prompt);
    assert.equal(panel.answerOf(ref().id, b.runId, far), '(no answer in this run)');
    assert.equal(panel.differing.length, TRACES - 2);
  });

  it('opens full width where a review left two groups, and Enter’s diff opens beside it, the table keeping the focus', async () => {
    const [a, b] = session().runs;
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // Two groups, as a review's prompt and answer leave them (the second holds none of the user's editors).
    await vscode.commands.executeCommand('workbench.action.newGroupRight');
    assert.equal(vscode.window.tabGroups.all.length, 2);
    await api.compare.compare(ref(), a!, b!);
    assert.equal(vscode.window.tabGroups.all.length, 1, 'Compare Runs has the window’s width');
    const panel = api.compare.findRuns(ref().id, a!.runId, b!.runId)!;
    await until('the page got its rows', () => panel.lastView !== undefined);
    // What Enter on a row sends.
    await panel.diff(panel.differing[0]!);
    const [table, beside] = vscode.window.tabGroups.all;
    assert.ok(beside?.tabs.some((t) => t.input instanceof vscode.TabInputTextDiff), 'the diff opens beside the table');
    assert.ok(table?.activeTab?.input instanceof vscode.TabInputWebview, 'the table stays shown');
    assert.equal(vscode.window.tabGroups.activeTabGroup, table, 'and keeps the focus: no key goes to the read-only diff');
    assert.equal(vscode.window.activeTextEditor, undefined);
  });
});
