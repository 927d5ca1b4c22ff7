import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const CLI = join(__dirname, '..', '..', '..', 'dist', 'cli.js');

/** Runs copied text in a POSIX shell with `eval-runner` on PATH (asynchronously: the sandbox lives in this host). */
function runInShell(text: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  const bin = mkdtempSync(join(tmpdir(), 'eval-runner-bin-'));
  writeFileSync(join(bin, 'eval-runner'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'eval-runner'), 0o755);
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', text], { env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH ?? ''}` } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

describe('Copy as CLI Command: a run tried in the editor moves to CI unchanged', () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  const LABEL = 'Moves to CI';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 5 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
  });
  after(async () => {
    for (const key of ['target', 'baseUrl', 'evaluations', 'concurrency', 'servicePatience', 'targetRetries', 'keepRunsAlive']) await config().update(key, undefined, G);
    await sandbox.close();
  });

  it('copies one line for a command target, with the settings that differ and no secret; it runs as copied', async () => {
    await config().update('target', { type: 'command', command: "tr 'a-z' 'A-Z'" }, G);
    await config().update('concurrency', 3, G);
    // Every setting the CLI reads goes with it (these two once did not); an editor-only one stays behind.
    await config().update('servicePatience', 60, G);
    await config().update('targetRetries', 1, G);
    await config().update('keepRunsAlive', false, G);
    await until('the settings are read', () => api.ctx.settings.concurrency === 3 && api.ctx.settings.targetRetries === 1 && !api.ctx.settings.keepRunsAlive && api.ctx.settings.target.type === 'command');
    await vscode.commands.executeCommand('evalRunner.copyCliCommand', ref().id);
    const text = await vscode.env.clipboard.readText();
    const [comment, line] = text.trimEnd().split('\n');
    assert.equal(comment, '# Needs EVAL_RUNNER_TOKEN in the environment (never on the command line).');
    assert.equal(
      line,
      `eval-runner run --base-url ${sandbox.baseUrl} --evaluation 1 --kind benchmark --concurrency 3 --service-patience 60 --target-retries 1 --target command --command 'tr '\\''a-z'\\'' '\\''A-Z'\\'''`,
    );
    assert.ok(!text.includes(sandbox.token));
    const state = mkdtempSync(join(tmpdir(), 'eval-runner-ci-'));
    const run = await runInShell(`${text.trimEnd()} --state-dir ${state}`, { EVAL_RUNNER_TOKEN: sandbox.token });
    assert.equal(run.code, 0, run.output);
    assert.equal(sandbox.answerOf(1, 'bench-0000'), sandbox.answerOf(1, 'bench-0000')!.toUpperCase());
  });

  it('saves a config file for an HTTP target (template, headers; secret headers only by variable name) and copies --config', async () => {
    const target = {
      type: 'http',
      url: `${sandbox.baseUrl}/v1/chat/completions`,
      bodyTemplate: '{"model": "m", "messages": [{"role": "user", "content": "{{prompt}}"}]}',
      answerPath: 'choices.0.message.content',
      headers: { 'X-Team': 'evals' },
      secretHeaders: ['X-Api-Key'],
    };
    await config().update('target', target, G);
    for (const key of ['concurrency', 'servicePatience', 'targetRetries', 'keepRunsAlive']) await config().update(key, undefined, G);
    await until('the target is read', () => api.ctx.settings.target.type === 'http');
    const file = join(mkdtempSync(join(tmpdir(), 'eval-runner-config-')), 'eval-runner.config.json');
    api.ctx.askSaveUri = () => Promise.resolve(vscode.Uri.file(file));
    await vscode.commands.executeCommand('evalRunner.copyCliCommand', ref().id);
    const text = await vscode.env.clipboard.readText();
    assert.equal(text, `# Needs EVAL_RUNNER_TOKEN, X_API_KEY in the environment (never on the command line).\neval-runner run --config ${file} --base-url ${sandbox.baseUrl} --allow-env X_API_KEY=${new URL(sandbox.baseUrl).origin}\n`);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { target: typeof target };
    assert.deepEqual(saved.target, target, 'the target as configured: secret headers by name only');
    const state = mkdtempSync(join(tmpdir(), 'eval-runner-ci-'));
    const run = await runInShell(`${text.trimEnd()} --state-dir ${state} --fresh`, { EVAL_RUNNER_TOKEN: sandbox.token, X_API_KEY: 'from-the-ci-secrets' });
    assert.equal(run.code, 0, run.output);
  });
});
