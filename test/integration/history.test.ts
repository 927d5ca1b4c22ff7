import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { journalPath } from '../../src/core/journal/journal';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { tooltipText, until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const CLI = join(__dirname, '..', '..', '..', 'dist', 'cli.js');


describe('one history for the CLI and the editor', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: 'Shared history' }], G);
    await config().update('target', { type: 'echo' }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === 'Shared history'));
  });
  after(async () => {
    for (const key of ['target', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it("uses the CLI's state folder by default ($XDG_STATE_HOME/eval-runner)", () => {
    assert.ok(process.env.XDG_STATE_HOME, 'the harness gives the editor its own XDG_STATE_HOME');
    assert.equal(api.ctx.settings.stateDir, join(process.env.XDG_STATE_HOME, 'eval-runner'));
  });

  it('shows a run the CLI made in the same state folder: the tree follows its journal', async () => {
    const ref = api.ctx.registry.refs.find((r) => r.label === 'Shared history')!;
    const session = api.ctx.registry.session(ref);
    // Asynchronously: the sandbox answering the CLI lives in this same extension host.
    const code = await new Promise<number>((resolve) => {
      const args = [CLI, 'run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--target', 'echo', '--state-dir', api.ctx.settings.stateDir];
      execFile(process.execPath, args, { env: { ...process.env, EVAL_RUNNER_TOKEN: sandbox.token } }, (error) => resolve(error ? Number(error.code ?? 1) : 0));
    });
    assert.equal(code, 0);
    await until('the session has read the CLI run', () => session.store.counts.submitted === 25);
    assert.equal(session.runs.length, 1);
    assert.equal(session.runs[0]!.target, 'echo');
    assert.match(tooltipText(api.tree.getTreeItem({ kind: 'evaluation', ref }).tooltip), /Runs \(1\):\n .* · echo · 25 answered, 25 submitted, 0 failed/);
  });

  it("moves an older version's journals from the editor's storage into the state folder, once, merged with the CLI's", async () => {
    const storage = api.ctx.extension.globalStorageUri.fsPath;
    const origin = new URL(sandbox.baseUrl).origin;
    const oldJournal = journalPath(storage, { origin, kind: 'benchmark', evaluationId: 1 });
    const newJournal = journalPath(api.ctx.settings.stateDir, { origin, kind: 'benchmark', evaluationId: 1 });
    const cliLines = readFileSync(newJournal, 'utf8').split('\n').filter(Boolean).length;
    mkdirSync(dirname(oldJournal), { recursive: true });
    // What the editor wrote before 0.2: a reviewer's note on one trace, earlier than the CLI's run.
    writeFileSync(oldJournal, `${JSON.stringify({ t: 'skipped', id: 'bench-0024', reason: 'kept from the old editor', at: 1 })}\n`);
    writeFileSync(oldJournal.replace(/\.jsonl$/, '.prompts.json'), JSON.stringify([{ traceId: 'bench-0000', content: 'old prompt' }]));
    await api.ctx.extension.globalState.update('evalRunner.journalsMoved', undefined);
    api.restart();
    // The move is recorded once it is done, after the old file is gone: waited for, not read at once.
    await until('the move is done and recorded', () => !existsSync(oldJournal) && api.ctx.extension.globalState.get('evalRunner.journalsMoved') === true);
    const merged = readFileSync(newJournal, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { t: string; at: number });
    assert.equal(merged.length, cliLines + 2, 'every record of both, nothing lost');
    assert.deepEqual(merged.slice(0, 2).map((r) => r.t), ['prompts', 'skipped'], 'in time order: the old records first');
    const ref = api.ctx.registry.refs.find((r) => r.label === 'Shared history')!;
    await until('the restarted session has loaded', () => api.ctx.registry.session(ref).store.counts.submitted > 0);
  });
});
