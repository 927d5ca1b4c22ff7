import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import { lockPathOf } from '../../src/core/journal/journalLock';
import { liveRunner, writeRunnerFile } from '../../src/protocol/runnerFiles';
import type { TreeNode } from '../../src/extension/evaluations/treeModel';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;


describe('the extension against the sandbox, in the real extension host', () => {
  let api: TestHandles;
  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    assert.ok(api, 'test handles are exported in test mode');
    await config().update('target', { type: 'echo' }, G);
    await config().update('concurrency', 8, G);
  });
  after(async () => {
    await vscode.commands.executeCommand('evalRunner.stopSandbox');
    for (const key of ['target', 'concurrency', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
  });

  const sandboxRefs = () => api.ctx.registry.refs.filter((r) => r.source === 'sandbox');

  it('starts the local sandbox and shows its two evaluations as tree roots', async () => {
    await vscode.commands.executeCommand('evalRunner.startSandbox');
    assert.deepEqual(sandboxRefs().map((r) => `${r.kind} ${r.evaluationId}`), ['benchmark 1', 'robustness 2']);
    const roots = api.tree.getChildren();
    const labels = roots.map((n) => api.tree.getTreeItem(n).label);
    assert.ok(labels.includes('Sandbox benchmark 1'));
    const item = api.tree.getTreeItem(roots[0]!);
    assert.match(String(item.contextValue), /^evaluation:benchmark:idle:sandbox/);
    assert.equal(item.description, 'prompts not fetched');
  });

  it('fetches the prompts and shows the traces grouped by state, with stable ids', async () => {
    const ref = sandboxRefs()[0]!;
    await vscode.commands.executeCommand('evalRunner.fetchPrompts', ref.id);
    const root: TreeNode = { kind: 'evaluation', ref };
    const groups = api.tree.getChildren(root);
    assert.equal(groups.length, 1);
    assert.equal(api.tree.getTreeItem(groups[0]!).label, 'Awaiting Trigger (25)');
    const traces = api.tree.getChildren(groups[0]);
    assert.equal(traces.length, 25);
    const item = api.tree.getTreeItem(traces[3]!);
    assert.equal(item.contextValue, 'trace:pending:noAnswer:unrated');
    assert.equal(item.id, api.tree.getTreeItem(api.tree.getChildren(api.tree.getChildren(root)[0])[3]!).id);
    assert.match(String(api.tree.getTreeItem(root).description), /^0\/25 submitted/);
  });

  it('keeps tokens in SecretStorage per service origin', async () => {
    const origin = 'https://evals.example.invalid';
    assert.equal(await api.ctx.tokens.get(origin), undefined);
    await api.ctx.tokens.set(origin, 'pat-round-trip');
    assert.equal(await api.ctx.tokens.get(origin), 'pat-round-trip');
    await api.ctx.tokens.clear(origin);
    assert.equal(await api.ctx.tokens.get(origin), undefined);
    const sandboxOrigin = sandboxRefs()[0]!.origin;
    assert.equal(await api.ctx.tokenFor(sandboxRefs()[0]!), 'sandbox-token', 'the sandbox gives its own token');
    assert.equal(await api.ctx.tokens.get(sandboxOrigin), undefined, 'and stores none');
  });

  it('runs both evaluations with the echo target to all-submitted', async () => {
    for (const ref of sandboxRefs()) {
      await vscode.commands.executeCommand('evalRunner.runEvaluation', ref.id);
      const session = api.ctx.registry.session(ref);
      const total = ref.kind === 'benchmark' ? 25 : 20;
      assert.equal(session.store.counts.submitted, total, `${ref.label}: ${JSON.stringify(session.lastSummary?.message)}`);
      const service = api.ctx.sandbox.sandbox!.summary(ref.evaluationId)!;
      assert.equal(service.counts.Responded + service.counts.Evaluated, total);
    }
    const groups = api.tree.getChildren({ kind: 'evaluation', ref: sandboxRefs()[0]! });
    assert.deepEqual(groups.map((g) => api.tree.getTreeItem(g).label), ['Submitted (25)']);
  });

  it('after a reload the sandbox is the same place: its evaluations listed at once, with their history, and it listens again', async () => {
    const before = sandboxRefs().map((r) => r.id);
    api = api.restart();
    assert.deepEqual(sandboxRefs().map((r) => r.id), before, 'listed before the sandbox listens, under the same ids');
    const sandbox = await api.ctx.sandbox.start();
    assert.equal(sandboxRefs()[0]!.baseUrl, sandbox.baseUrl, 'its runs go where it listens now');
    const session = api.ctx.registry.session(sandboxRefs()[0]!);
    await session.load();
    assert.equal(session.store.counts.submitted, 25, 'the runs before the reload are its history');
    assert.ok(session.runs.length >= 1);
  });

  it('reviews before submitting: answers wait as Responded; an edited answer is what gets submitted', async () => {
    const sandbox: Sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0 });
    try {
      await config().update('baseUrl', sandbox.baseUrl, G);
      await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: 'Review test' }], G);
      await config().update('target', { type: 'echo' }, G);
      await config().update('reviewBeforeSubmit', true, G);
      await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === 'Review test'));
      const ref = api.ctx.registry.refs.find((r) => r.label === 'Review test')!;
      await api.ctx.tokens.set(ref.origin, sandbox.token);
      await vscode.commands.executeCommand('evalRunner.runEvaluation', ref.id);
      const session = api.ctx.registry.session(ref);
      assert.equal(session.store.counts.answered, 25, 'every answer waits for review');
      assert.equal(sandbox.stats.submissions, 0);

      await vscode.commands.executeCommand('evalRunner.openTrace', ref.id, 'bench-0002');
      const answerDoc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'evalrunner' && d.uri.path.endsWith('/bench-0002/answer.txt'))!;
      const promptDoc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'evalrunner' && d.uri.path.endsWith('/bench-0002/prompt.txt'))!;
      assert.ok(answerDoc && promptDoc, 'prompt and answer are open');
      assert.equal(promptDoc.getText(), session.store.get('bench-0002')!.prompt);
      const editor = await vscode.window.showTextDocument(answerDoc);
      await editor.edit((e) => e.replace(new vscode.Range(0, 0, answerDoc.lineCount, 0), 'Réunion 2 déplacée.\nReviewed by a person.'));
      await vscode.commands.executeCommand('evalRunner.submitResponse', answerDoc.uri);
      assert.equal(sandbox.answerOf(1, 'bench-0002'), 'Réunion 2 déplacée.\nReviewed by a person.');
      assert.equal(session.store.get('bench-0002')!.state, 'submitted');
      assert.equal(session.store.get('bench-0002')!.answeredBy, 'user');
      await assert.rejects(
        Promise.resolve(vscode.workspace.fs.writeFile(promptDoc.uri, Buffer.from('tampered'))),
        /read-only|NoPermissions/i,
        'the prompt cannot be edited',
      );
      // An answer opened but not edited goes out exactly as journaled, mixed line endings included.
      await vscode.commands.executeCommand('evalRunner.openTrace', ref.id, 'bench-0005');
      const mixed = vscode.workspace.textDocuments.find((d) => d.uri.path.endsWith('/bench-0005/answer.txt'))!;
      await vscode.commands.executeCommand('evalRunner.submitResponse', mixed.uri);
      assert.equal(sandbox.answerOf(1, 'bench-0005'), 'Line one\r\nLine two\nLine three\r\n\tIndented — keep the layout.');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    } finally {
      await config().update('reviewBeforeSubmit', undefined, G);
      await sandbox.close();
    }
  });

  it('a run whose runner is killed (as a machine restart would) is offered to resume by the next window, and resumes without calling the target again for journaled answers', async () => {
    const sandbox: Sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0 });
    const calls = join(mkdtempSync(join(tmpdir(), 'eval-runner-it-')), 'calls.log');
    try {
      await config().update('baseUrl', sandbox.baseUrl, G);
      await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: 'Resume test' }], G);
      await config().update('target', { type: 'command', command: `echo x >> '${calls}'; sleep 0.1; cat` }, G);
      await config().update('concurrency', 2, G);
      await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === 'Resume test'));
      const ref = api.ctx.registry.refs.find((r) => r.label === 'Resume test') as EvaluationRef;
      await api.ctx.tokens.set(ref.origin, sandbox.token);
      const running = vscode.commands.executeCommand('evalRunner.runEvaluation', ref.id);
      await until('a few answers are submitted', () => sandbox.stats.submissions >= 5);
      process.kill(liveRunner(api.ctx.registry.session(ref).journalFile)!.pid, 'SIGKILL');
      await running;
      const submittedBefore = sandbox.stats.submissions;
      assert.ok(submittedBefore < 25, 'the kill interrupted the run');
      api = api.restart();
      await until('the next window offers to resume it', () => api.runs.resumeOffered.includes(ref.id));
      // It keeps looking for runs a few seconds after it opens; a run cut short is still offered once.
      await until('the window stops looking for runs', () => !api.runs.lookingForRuns, 30_000);
      assert.equal(api.runs.resumeOffered.filter((id) => id === ref.id).length, 1, 'offered once');
      const ref2 = api.ctx.registry.refs.find((r) => r.label === 'Resume test')!;
      await vscode.commands.executeCommand('evalRunner.runEvaluation', ref2.id);
      const s2 = api.ctx.registry.session(ref2);
      assert.equal(s2.store.counts.submitted, 25, JSON.stringify({ summary: s2.lastSummary, counts: s2.store.counts, file: s2.journalFile }));
      assert.equal(sandbox.summary(1)!.counts.Responded + sandbox.summary(1)!.counts.Evaluated, 25);
      const targetCalls = readFileSync(calls, 'utf8').split('\n').filter(Boolean).length;
      // What a kill may cost: the calls in flight (the concurrency, 2) and the answers not yet on disk, which the
      // engine keeps within the concurrency too (engine.ts, record): never a journaled answer.
      assert.ok(targetCalls <= 25 + 2 * 2, `target calls ${targetCalls} ≤ traces + 2 in flight + 2 not yet on disk at the kill`);
    } finally {
      await sandbox.close();
    }
  });

  it('a run whose runner the next window finds still exiting (killed, not gone yet) is offered once the process is gone', async () => {
    const sandbox: Sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0 });
    // Stands in for a killed runner whose exit a loaded machine has not finished: a process of this user's, alive a
    // while longer, that the runner file and the lock name, and whose socket no longer answers.
    const dying = spawn('sleep', ['2'], { stdio: 'ignore' });
    const gone = new Promise<void>((resolve) => dying.once('exit', () => resolve()));
    let goneNow = false;
    void gone.then(() => (goneNow = true));
    try {
      await config().update('baseUrl', sandbox.baseUrl, G);
      await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: 'Dying runner test' }], G);
      await config().update('target', { type: 'command', command: 'sleep 0.1; cat' }, G);
      await config().update('concurrency', 2, G);
      await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === 'Dying runner test'));
      const ref = api.ctx.registry.refs.find((r) => r.label === 'Dying runner test') as EvaluationRef;
      await api.ctx.tokens.set(ref.origin, sandbox.token);
      const running = vscode.commands.executeCommand('evalRunner.runEvaluation', ref.id);
      await until('a few answers are submitted', () => sandbox.stats.submissions >= 3);
      const journal = api.ctx.registry.session(ref).journalFile;
      const runner = liveRunner(journal)!;
      process.kill(runner.pid, 'SIGKILL');
      await running;
      writeRunnerFile(journal, { ...runner, pid: dying.pid! });
      writeFileSync(lockPathOf(journal), String(dying.pid));
      api = api.restart();
      await until('the next window offers to resume it', () => api.runs.resumeOffered.includes(ref.id));
      assert.ok(goneNow, 'not offered while a process of the run was alive');
    } finally {
      dying.kill();
      await sandbox.close();
    }
  });
});
