import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

describe('Export Report in the editor', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Report bench';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 12 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'echo' }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
  });
  after(async () => {
    for (const key of ['target', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('writes the same self-contained report as the CLI: every trace, the run, a strict CSP, owner-only', async () => {
    await api.runs.run(ref());
    const file = join(mkdtempSync(join(tmpdir(), 'eval-runner-report-')), 'report.html');
    const original = api.ctx.askSaveUri;
    api.ctx.askSaveUri = () => Promise.resolve(vscode.Uri.file(file));
    try {
      await vscode.commands.executeCommand('evalRunner.exportReport', ref().id);
    } finally {
      api.ctx.askSaveUri = original;
    }
    const html = readFileSync(file, 'utf8');
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'; img-src data:">/);
    const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!) as { rows: string[][]; runs: Array<{ runId: string }> };
    const session = api.ctx.registry.session(ref());
    assert.deepEqual(data.rows.map((r) => r[0]).sort(), [...session.store.traces.keys()].sort());
    assert.deepEqual(data.runs.map((r) => r.runId), session.runs.map((r) => r.runId));
    assert.ok(!/<script>\s*<\/script>/.test(html), 'the page script is inline');
    assert.equal(statSync(file).mode & 0o077, 0);
  });
});
