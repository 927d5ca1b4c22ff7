import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { freshSandbox } from './freshSandbox';
import type { Sandbox } from '../../src/sandbox/server';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const http = () => vscode.workspace.getConfiguration('http');
const G = vscode.ConfigurationTarget.Global;

describe("the editor behind a proxy: VS Code's http.proxy and http.noProxy", () => {
  let api: TestHandles;
  let sandbox: Sandbox;
  let proxy: import('node:http').Server;
  let proxyUrl: string;
  const tunnels: string[] = [];
  const LABEL = 'Behind the proxy';
  const ref = () => api.ctx.registry.refs.find((r) => r.label === LABEL)!;

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    // A real forward proxy (the `proxy` package), in this extension host like the sandbox.
    const { createProxy } = await import('proxy');
    proxy = createProxy(createServer());
    proxy.on('connect', (req: { url?: string }) => tunnels.push(req.url ?? ''));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0, benchmarkTraces: 5 });
    await config().update('baseUrl', sandbox.baseUrl, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: LABEL }], G);
    await config().update('target', { type: 'openai', baseUrl: `${sandbox.baseUrl}/v1`, model: 'sandbox-echo' }, G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === LABEL));
    await api.ctx.tokens.set(new URL(sandbox.baseUrl).origin, sandbox.token);
    await api.ctx.tokens.markKeyless(new URL(sandbox.baseUrl).origin);
  });
  after(async () => {
    for (const key of ['proxy', 'noProxy']) await http().update(key, undefined, G);
    for (const key of ['target', 'baseUrl', 'evaluations']) await config().update(key, undefined, G);
    await sandbox.close();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  });

  it('sends the service and the model through http.proxy', async () => {
    await http().update('proxy', proxyUrl, G);
    const summary = await api.runs.run(ref());
    assert.equal(summary?.outcome, 'completed', summary?.message);
    assert.equal(sandbox.stats.submissions, 5);
    assert.ok(tunnels.length >= 2, `tunnels: ${tunnels.join(' ')}`);
    assert.ok(tunnels.every((t) => t === new URL(sandbox.baseUrl).host));
  });

  it('goes direct for the hosts in http.noProxy', async () => {
    tunnels.length = 0;
    await http().update('noProxy', ['127.0.0.1'], G);
    const summary = await api.runs.run(ref(), { mode: 'fresh' });
    assert.equal(summary?.outcome, 'completed', summary?.message);
    assert.deepEqual(tunnels, []);
  });
});
