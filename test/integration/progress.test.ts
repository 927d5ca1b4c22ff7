import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { seedPrompts } from '../../src/sandbox/seed';
import { preview, PREVIEW_CHARS } from '../../src/core';
import type { ViewMessage } from '../../src/webview/protocol';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const TRACES = 2000;
const ROBUSTNESS = 1500;

// The window draws a run's progress from one coalesced stream: the tree's line never disagrees with the toast and the
// status bar (issue 40: "the tree lags the toast, 1,320 against 1,781"), and the run's last update is drawn.
describe('progress: the tree, the toast and the status bar draw the same update', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const label = 'Progress test';
  const shown = 'Progress with Run Details';
  const refOf = (name = label): EvaluationRef => api.ctx.registry.refs.find((r) => r.label === name)!;
  /** Runs the evaluation to its end, `off` called once the run command returned, and checks it completed. */
  const runToEnd = async (ref: EvaluationRef, off: () => void) => {
    try {
      await vscode.commands.executeCommand('evalRunner.runEvaluation', ref.id);
    } finally {
      off();
    }
    const session = api.ctx.registry.session(ref);
    await until('the run ended', () => !session.isRunning);
    assert.equal(session.lastSummary?.outcome, 'completed', session.lastSummary?.message);
  };

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: TRACES, robustnessTraces: ROBUSTNESS, generationSeconds: 0 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label }, { evaluationId: 2, kind: 'robustness', label: shown }], G);
    await config().update('target', { type: 'echo' }, G);
    await config().update('concurrency', 4, G);
    await until('the evaluations are listed', () => api.ctx.registry.refs.some((r) => r.label === shown));
    await api.ctx.tokens.set(refOf().origin, sandbox.token);
  });
  after(async () => {
    for (const key of ['baseUrl', 'evaluations', 'target', 'concurrency']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('the tree\'s counts equal what the status bar and the toast drew, during the run and at its end', async () => {
    const ref = refOf();
    const session = api.ctx.registry.session(ref);
    const line = () => String(api.tree.getTreeItem({ kind: 'evaluation', ref }).description);
    const drawnLine = () => {
      const p = api.runs.lastDrawn(ref.id);
      return p?.total ? `${p.counts.submitted}/${p.total} submitted` : undefined;
    };
    const seen: string[] = [];
    const differ: string[] = [];
    // Traces the window read from the journal while it followed the run: nothing it shows needs them (the tree's node is
    // collapsed, Run Details closed), so it reads the run once, at its end.
    let readDuringRun = 0;
    // The tree's refreshes during the run: each goes out with a progress update (in the tick of a session change, so the
    // workbench gets it with the toast's words and draws them in one frame), or alone (a timer's, a frame of its own).
    // (The tree refreshes the nodes it gave: asked for its roots, as the view asks.)
    api.tree.getChildren();
    let treeWaiting = false;
    let withUpdate = 0;
    const alone: number[] = [];
    const offTree = api.tree.onDidChangeTreeData(() => {
      if (!session.isRunning) return;
      treeWaiting = true;
      setImmediate(() => {
        if (treeWaiting) alone.push(Date.now());
        treeWaiting = false;
      });
    });
    // Each time the session changes during the run, the tree's line (as it would be drawn now) against the last update drawn.
    const off = session.onDidChange(() => {
      // (The tree hears of a change before this listener, which was added after it.)
      if (treeWaiting) withUpdate++;
      treeWaiting = false;
      const drawn = drawnLine();
      if (!session.isRunning || !drawn) return;
      // (Until its last update: the window reads the run once it ended, before it stops following it.)
      if (api.runs.lastDrawn(ref.id)?.phase !== 'done') readDuringRun = Math.max(readDuringRun, session.store.total);
      seen.push(drawn);
      if (!line().startsWith(`${drawn} ·`)) differ.push(`tree "${line()}" against drawn "${drawn}"`);
    });
    await runToEnd(ref, () => {
      off();
      offTree.dispose();
    });
    assert.ok(seen.length > 1, `the run drew its progress (${seen.length} updates)`);
    // How many come alone depends on the machine's timing (a pause makes the timer beat an update): the beat itself is
    // tested on a fake clock (test/unit/progressPace.test.ts). Here: the tree's refreshes go out with the updates.
    assert.ok(withUpdate >= 1, `the tree refreshed ${withUpdate} times with an update and ${alone.length} alone`);
    assert.deepEqual(differ.slice(0, 5), [], `${differ.length} of ${seen.length} updates differ`);
    // The run's last update is never dropped: the status bar and the toast drew its end, and the tree says the same.
    assert.equal(api.runs.lastDrawn(ref.id)?.phase, 'done');
    assert.equal(drawnLine(), `${TRACES}/${TRACES} submitted`);
    assert.equal(line(), `${TRACES}/${TRACES} submitted`);
    assert.equal(readDuringRun, 0, 'the window read no trace of the journal during the run');
    assert.equal(session.store.counts.submitted, TRACES, 'the window read the run at its end');
  });

  it("Run Details of a run in its runner: its rows and figures the runner's, the journal not read during the run", async () => {
    const ref = refOf(shown);
    const session = api.ctx.registry.session(ref);
    api.panels.open(ref);
    const panel = () => api.panels.find(ref.id);
    await until('Run Details is ready', () => panel()?.lastProgress !== undefined);
    // Run Details shows the runner's rows by their places and its figures: the window reads no trace of the journal
    // until the run's end (not even its prompt list), and the panel still shows the run's figures.
    // (A read of the journal gives the session's store the run's traces or their answers.)
    const stored = () => `${session.store.traces.size} ${JSON.stringify(session.store.snapshotCounts())}`;
    const before = stored();
    let figures = false;
    const readAfter: string[] = [];
    // The rows the page got during the run, each checked against the sandbox when first seen: the runner's rows by place.
    const seed = seedPrompts('robustness', ROBUSTNESS);
    const order = seed.map((p) => p.traceId);
    const wrong: string[] = [];
    let runnerRows = 0;
    let lastChecked: ViewMessage | undefined;
    const off = session.onDidChange(() => {
      if (!session.isRunning || api.runs.lastDrawn(ref.id)?.phase === 'done') return;
      if (stored() !== before) readAfter.push(stored());
      figures ||= /latency p50/.test(panel()?.lastProgress?.run?.stats ?? '');
      const view = panel()?.lastView;
      if (!view || view === lastChecked) return;
      lastChecked = view;
      wrong.push(...rowsAgainstSandbox(view, order, 2));
      if (view.rows.some((r) => r[1] === 'submitted')) runnerRows++;
    });
    await runToEnd(ref, off);
    assert.ok(figures, "Run Details showed the run's figures during the run");
    assert.deepEqual(readAfter.slice(0, 3), [], `the window read the journal ${readAfter.length} time(s) during the run`);
    assert.ok(runnerRows > 0, 'during the run the page had rows the runner submitted, though the window read no trace');
    assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} row(s) during the run not as the runner and the sandbox have them`);
    // Exact at the end: the figures and counts of the store the run's end left, and every row the page shows.
    await until("Run Details shows the run's end", () => panel()?.lastProgress?.running === false && panel()?.lastProgress?.counts.submitted === ROBUSTNESS);
    assert.equal(panel()!.lastProgress!.run?.runId, session.store.currentRun?.runId);
    assert.equal(session.store.counts.submitted, ROBUSTNESS);
    await until('Run Details shows the rows as the run left them', () => panel()?.lastView?.rows.every((r) => r[1] === 'submitted') === true);
    const end = panel()!.lastView!;
    assert.equal(end.total, ROBUSTNESS);
    assert.ok(end.rows.length > 0, 'the page shows rows at the end');
    assert.deepEqual(rowsAgainstSandbox(end, order, 2), []);
    assert.deepEqual(
      end.rows.map((r) => r.slice(0, 4)),
      seed.slice(end.start, end.start + end.rows.length).map((p) => [p.traceId, 'submitted', preview(p.content, PREVIEW_CHARS), preview(sandbox.answerOf(2, p.traceId), PREVIEW_CHARS)]),
    );
  });

  /**
   * What is wrong with a view's rows against the sandbox: each row's trace is the one at its place in the service's
   * order, and a row the page shows submitted has the answer the sandbox got (the sandbox gets it before the runner
   * says so, so a row the runner told earlier may be further along in the sandbox, never behind).
   */
  function rowsAgainstSandbox(view: ViewMessage, order: readonly string[], evaluationId: number): string[] {
    const wrong: string[] = [];
    view.rows.forEach((r, i) => {
      const id = order[view.start + i] ?? '(none)';
      if (r[0] !== id) wrong.push(`row ${view.start + i} is ${r[0]}, the service's is ${id}`);
      else if (r[1] === 'submitted' && r[3] !== preview(sandbox.answerOf(evaluationId, id), PREVIEW_CHARS)) wrong.push(`row ${view.start + i} (${id}): "${r[3]}" is not the answer submitted`);
    });
    return wrong;
  }
});
