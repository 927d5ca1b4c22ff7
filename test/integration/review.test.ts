import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunInfo } from '../../src/core';
import type { TestHandles } from '../../src/extension/main';
import { preview } from '../../src/extension/evaluations/treeModel';
import { parseReviewUri, ReviewCodeLens, reviewUri } from '../../src/extension/review/review';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { CompareRow } from '../../src/webview/protocol';
import { until, tooltipText } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

describe('review and insight in the editor', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Nightly bench';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;
  const session = () => api.ctx.registry.session(ref());
  const activeUri = () => vscode.window.activeTextEditor?.document.uri;

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 12 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'echo' }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
    await api.runs.run(ref());
    assert.equal(session().store.counts.submitted, 12);
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const key of ['target', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('names review documents by the label and trace id as they are, and wraps their long lines', async () => {
    const uri = reviewUri(ref(), 'a+b=c&d/e', 'answer');
    assert.equal(uri.path, '/Nightly bench/a+b=c&d\u2215e/answer.txt', 'no %20, %2B or %26 in tabs and breadcrumbs');
    assert.deepEqual(parseReviewUri(api.ctx, uri), { ref: ref(), traceId: 'a+b=c&d/e', part: 'answer' });
    // The sandbox's second trace id is 'bench a+b&c=d%20/ü': shown as it is, its slash as a look-alike.
    const hostile = [...session().store.traces.keys()][1]!;
    assert.equal(hostile, 'bench a+b&c=d%20/ü');
    await vscode.commands.executeCommand('evalRunner.openTrace', ref().id, hostile);
    const doc = vscode.window.activeTextEditor!.document;
    assert.equal(doc.uri.path, '/Nightly bench/bench a+b&c=d%20\u2215ü/answer.txt');
    assert.equal(parseReviewUri(api.ctx, doc.uri)?.traceId, hostile);
    assert.equal(doc.languageId, 'evalrunner-review');
    assert.equal(vscode.workspace.getConfiguration('editor', doc).get('wordWrap'), 'on');
  });

  it('walks to the next and previous trace from the review editor (no tree needed)', async () => {
    await vscode.commands.executeCommand('evalRunner.openTrace', ref().id, 'bench-0003');
    await vscode.commands.executeCommand('evalRunner.nextTrace');
    await until('bench-0004 is in front', () => parseReviewUri(api.ctx, activeUri()!)?.traceId === 'bench-0004');
    await vscode.commands.executeCommand('evalRunner.previousTrace');
    await vscode.commands.executeCommand('evalRunner.previousTrace');
    await until('bench-0002 is in front', () => parseReviewUri(api.ctx, activeUri()!)?.traceId === 'bench-0002');
  });

  it('Next Trace replaces the review tabs: only the new trace’s are left open', async () => {
    const reviewTabs = () =>
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).flatMap((t) => (t.input instanceof vscode.TabInputText ? [parseReviewUri(api.ctx, t.input.uri)] : []));
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('evalRunner.openTrace', ref().id, 'bench-0003');
    // Pinned, as a double click or an edit leaves them: Next must still not leave them behind.
    await vscode.commands.executeCommand('workbench.action.keepEditor');
    await vscode.commands.executeCommand('evalRunner.nextTrace');
    await until('bench-0004 is in front', () => parseReviewUri(api.ctx, activeUri()!)?.traceId === 'bench-0004');
    await until('only bench-0004’s tabs are open', () => reviewTabs().every((t) => t?.traceId === 'bench-0004'));
    assert.deepEqual(reviewTabs().map((t) => t?.part).sort(), ['answer', 'prompt']);
  });

  it('offers Submit only on answers not yet submitted, and the verdict actions on every answer', async () => {
    const titles = async (traceId: string) => {
      const doc = await vscode.workspace.openTextDocument(reviewUri(ref(), traceId, 'answer'));
      return new ReviewCodeLens(api.ctx).provideCodeLenses(doc).map((l) => l.command?.title ?? '');
    };
    const submitted = await titles('bench-0002');
    assert.ok(submitted.includes('$(pass) Submitted'), submitted.join(' | '));
    assert.ok(!submitted.some((t) => /Submit Response|Approve/.test(t)), 'no Submit on a submitted answer');
    assert.ok(submitted.includes('$(thumbsup) Good') && submitted.includes('$(thumbsdown) Bad'));
    await session().saveAnswer('bench-0002', 'a reviewer rewrote this');
    const edited = await titles('bench-0002');
    assert.ok(edited.includes('$(cloud-upload) Submit Response'), 'a changed answer can be submitted again');
  });

  it('keeps a verdict and a note through a reload, in the tree, the CodeLens and the export', async () => {
    await vscode.commands.executeCommand('evalRunner.markGood', ref().id, 'bench-0005');
    await vscode.commands.executeCommand('evalRunner.markBad', ref().id, 'bench-0006');
    await session().setVerdict('bench-0006', 'bad', 'repeats the prompt');
    api.restart();
    await until('the restarted session has loaded', () => (session().store.get('bench-0005')?.rating ?? '') === 'good');
    const t6 = session().store.get('bench-0006')!;
    assert.equal(t6.rating, 'bad');
    assert.equal(t6.note, 'repeats the prompt');
    const item = api.tree.getTreeItem({ kind: 'trace', ref: ref(), trace: t6 });
    assert.equal((item.iconPath as vscode.ThemeIcon).id, 'thumbsdown');
    assert.match(String(item.contextValue), /^trace:submitted:hasAnswer:bad$/);
    assert.match(tooltipText(item.tooltip), /Rated bad: repeats the prompt/);
    const lenses = new ReviewCodeLens(api.ctx).provideCodeLenses(await vscode.workspace.openTextDocument(reviewUri(ref(), 'bench-0006', 'answer')));
    assert.ok(lenses.some((l) => l.command?.title === '$(thumbsdown) Bad ✓'));
    assert.ok(lenses.some((l) => l.command?.title === '$(note) Note: repeats the prompt'));
    // Marking good again clears the verdict.
    await vscode.commands.executeCommand('evalRunner.markGood', ref().id, 'bench-0005');
    assert.equal(session().store.get('bench-0005')!.rating, undefined);
    const lines = [...(await session().exportLines('jsonl'))].map((l) => JSON.parse(l) as { traceId: string; rating: string | null; note: string | null });
    assert.deepEqual(lines.find((l) => l.traceId === 'bench-0006'), { ...lines.find((l) => l.traceId === 'bench-0006'), rating: 'bad', note: 'repeats the prompt' });
  });

  it('compares two runs: the differing traces, a diff editor per trace, and one run’s answer submitted', async () => {
    await config().update('target', { type: 'command', command: 'tr a-z A-Z' }, G);
    await until('the target setting is read', () => api.ctx.settings.target.type === 'command');
    await api.runs.run(ref(), { mode: 'fresh' });
    const runs = session().runs;
    assert.equal(runs.length, 2);
    const [a, b] = runs as [(typeof runs)[number], (typeof runs)[number]];
    await api.compare.compare(ref(), a, b);
    const panel = api.compare.findRuns(ref().id, a.runId, b.runId)!;
    assert.ok(panel, 'the panel is open');
    const expected = [...session().store.traces.values()].filter((t) => t.prompt !== t.prompt!.toUpperCase()).map((t) => t.traceId);
    assert.deepEqual(panel.differing, expected);
    // The page asked for its rows: the differing ones (its default filter, applied on the host), with both answers.
    await until('the page got its rows', () => panel.lastView !== undefined);
    assert.deepEqual(panel.lastView!.rows.map((r) => r[CompareRow.TraceId]), expected);
    assert.equal(panel.lastView!.total, 12);
    assert.equal(panel.lastView!.rows[0]![CompareRow.AnswerB], preview(session().store.get(expected[0]!)!.prompt!.toUpperCase(), 300));
    await panel.diff(expected[0]!);
    // The diff opens beside the table, which keeps the focus: it is the active tab of another group.
    const diffTab = () => vscode.window.tabGroups.all.map((g) => g.activeTab?.input).find((i) => i instanceof vscode.TabInputTextDiff);
    await until('the diff editor shows both runs', () => diffTab() !== undefined);
    const input = diffTab() as vscode.TabInputTextDiff;
    const left = await vscode.workspace.openTextDocument(input.original);
    const right = await vscode.workspace.openTextDocument(input.modified);
    const prompt = session().store.get(expected[0]!)!.prompt!;
    assert.equal(left.getText(), prompt);
    assert.equal(right.getText(), prompt.toUpperCase());
    await panel.submit(expected[0]!, 'a');
    assert.equal(sandbox.answerOf(1, expected[0]!), prompt, 'the echo run’s answer is what the service holds now');
    assert.equal(session().store.get(expected[0]!)!.answerRun, a.runId);
  });

  it('shows both runs’ verdicts in Compare Runs and carries one over to the same answer', async () => {
    // bench-0006 was judged Bad on the first (echo) run's answer; now the upper-case run's answer to bench-0008 Good.
    await session().setVerdict('bench-0008', 'good', undefined);
    await config().update('target', { type: 'echo' }, G);
    await until('the target setting is read', () => api.ctx.settings.target.type === 'echo');
    await api.runs.run(ref(), { mode: 'fresh' });
    const [a, b, c] = session().runs as [RunInfo, RunInfo, RunInfo];
    const rows = async (x: RunInfo, y: RunInfo) => {
      await api.compare.compare(ref(), x, y);
      const panel = api.compare.findRuns(ref().id, x.runId, y.runId)!;
      // What the page sends (every row, not only the differing ones), through the host's checks.
      const receive = (raw: unknown) => (panel as unknown as { receiveRaw(raw: unknown): void }).receiveRaw(raw);
      receive({ type: 'query', filters: { onlyDiffering: false, search: '' }, activeKey: null, start: 0, end: 50 });
      await until('the page got every row', () => panel.lastView?.length === 12);
      const row = (id: string) => panel.lastView!.rows.find((r) => r[CompareRow.TraceId] === id)!;
      return { panel, receive, row };
    };
    const ab = await rows(a, b);
    assert.deepEqual([ab.row('bench-0006')[CompareRow.VerdictA], ab.row('bench-0006')[CompareRow.VerdictB]], ['bad', null]);
    assert.deepEqual([ab.row('bench-0008')[CompareRow.VerdictA], ab.row('bench-0008')[CompareRow.VerdictB]], [null, 'good']);
    // The first run and the new echo run gave bench-0006 the same answer: its verdict can go over.
    const ac = await rows(a, c);
    assert.equal(ac.row('bench-0006')[CompareRow.Differs], false);
    assert.equal(ac.row('bench-0006')[CompareRow.VerdictB], null);
    ac.receive({ type: 'carryVerdict', traceId: 'bench-0006', from: 'nowhere' });
    ac.receive({ type: 'carryVerdict', traceId: 'bench-0006', from: 'a' });
    await until('the new run’s answer has the verdict', () => ac.row('bench-0006')[CompareRow.VerdictB] === 'bad');
    assert.equal(session().store.get('bench-0006')!.rating, 'bad', 'the new run’s answer is the trace’s own now');
    assert.equal(session().store.verdictOf(a.runId, 'bench-0006')?.rating, 'bad', 'the first run keeps its own');
  });
});
