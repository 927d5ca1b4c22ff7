import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

// After a reload the sandbox's evaluations are listed at once, at the address it had, before it listens again; the
// port may be taken meanwhile (another window's sandbox, another program) and the sandbox then listens elsewhere.
describe('the sandbox after a reload on another port: its runs go where it listens now', () => {
  it('a run started before the sandbox listens again sends nothing (no token, no answer) to the port it had', async () => {
    let api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    const heard: string[] = [];
    const squatter = createServer((req, res) => {
      heard.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as AddressInfo).port;
    try {
      await config().update('target', { type: 'echo' }, G);
      await vscode.commands.executeCommand('evalRunner.stopSandbox');
      // The window left its sandbox running at a port that is now another's.
      await api.ctx.extension.workspaceState.update('evalRunner.sandbox.place', { baseUrl: `http://127.0.0.1:${port}`, evaluations: [{ evaluationId: 1, kind: 'benchmark' }] });
      await api.ctx.extension.globalState.update('evalRunner.sandbox.lastPort', port);
      api = api.restart();
      const ref = api.ctx.registry.refs.find((r) => r.source === 'sandbox')!;
      assert.equal(new URL(ref.baseUrl).port, String(port), 'listed at once, where it was');
      await vscode.commands.executeCommand('evalRunner.runEvaluation', ref.id);
      const sandbox = api.ctx.sandbox.sandbox!;
      assert.notEqual(new URL(sandbox.baseUrl).port, String(port), 'the sandbox listens elsewhere now');
      assert.deepEqual(heard, [], 'the program at the old port was sent nothing');
      const session = api.ctx.registry.session(ref);
      assert.equal(session.store.counts.submitted, 25, JSON.stringify(session.lastSummary?.message));
    } finally {
      await vscode.commands.executeCommand('evalRunner.stopSandbox');
      await config().update('target', undefined, G);
      squatter.close();
    }
  });
});
