import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { json, scriptedServer } from '../unit/helpers/servers';
import type { ScriptedServer } from '../unit/helpers/servers';
import { plannedTarget } from './plannedTarget';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const CALL = { signal: new AbortController().signal, timeoutMs: 5_000 };


describe('secrets in the editor: each bound to the origin it was given for', () => {
  let api: TestHandles;
  let endpointA: ScriptedServer;
  let endpointB: ScriptedServer;
  let asked: string[];
  let answer: string | undefined;
  const model = (_req: unknown, res: Parameters<typeof json>[0]) => json(res, 200, { choices: [{ message: { content: 'ok' } }], text: 'ok' });
  const openai = async (server: ScriptedServer) => {
    await config().update('target', { type: 'openai', baseUrl: `${server.url}/v1`, model: 'm' }, G);
    await until('the target setting is read', () => {
      const t = api.ctx.settings.target;
      return t.type === 'openai' && t.baseUrl === `${server.url}/v1`;
    });
  };

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    endpointA = await scriptedServer(model);
    endpointB = await scriptedServer(model);
    // The password box, answered by the test: what it was asked, and what the user types (undefined: Escape).
    api.ctx.askSecret = (title) => {
      asked.push(title);
      return Promise.resolve(answer);
    };
  });
  beforeEach(() => {
    asked = [];
    answer = undefined;
  });
  after(async () => {
    await config().update('target', undefined, G);
    await config().update('baseUrl', undefined, G);
    await config().update('evaluations', undefined, G);
    for (const s of [endpointA, endpointB]) await api.ctx.tokens.clearModelKey(new URL(s.url).origin);
    await endpointA.close();
    await endpointB.close();
  });

  it("never sends endpoint A's key to endpoint B: B's own key is asked for, stored under B, and A keeps its own", async () => {
    const originA = new URL(endpointA.url).origin;
    const originB = new URL(endpointB.url).origin;
    await api.ctx.tokens.setModelKey(originA, 'sk-for-endpoint-A');

    await openai(endpointB);
    assert.equal(await plannedTarget(api), undefined, 'declining the question cancels the run');
    assert.deepEqual(asked, [`API key for ${originB}`]);
    assert.equal(endpointB.seen.length, 0);

    answer = 'sk-for-endpoint-B';
    const targetB = (await plannedTarget(api))!;
    await targetB.send('hello', CALL);
    await targetB.close?.();
    assert.equal(endpointB.seen.at(-1)!.headers.authorization, 'Bearer sk-for-endpoint-B');
    assert.equal(await api.ctx.tokens.getModelKey(originB), 'sk-for-endpoint-B');

    await openai(endpointA);
    asked = [];
    const targetA = (await plannedTarget(api))!;
    await targetA.send('hello', CALL);
    await targetA.close?.();
    assert.deepEqual(asked, [], 'a stored key is not asked for again');
    assert.equal(endpointA.seen.at(-1)!.headers.authorization, 'Bearer sk-for-endpoint-A');
    for (const seen of endpointB.seen) assert.notEqual(seen.headers.authorization, 'Bearer sk-for-endpoint-A');

    await api.ctx.tokens.clearModelKey(originB);
    assert.equal(await api.ctx.tokens.getModelKey(originB), undefined, 'Clear Model Key forgets it');
    assert.equal(await api.ctx.tokens.getModelKey(originA), 'sk-for-endpoint-A', 'and only for that origin');
  });

  it('remembers an endpoint that needs no key, and sends it none', async () => {
    await api.ctx.tokens.clearModelKey(new URL(endpointB.url).origin);
    await openai(endpointB);
    answer = '';
    const first = (await plannedTarget(api))!;
    await first.send('hello', CALL);
    assert.equal(endpointB.seen.at(-1)!.headers.authorization, undefined);
    asked = [];
    await (await plannedTarget(api))!.send('again', CALL);
    assert.deepEqual(asked, [], 'not asked again');
  });

  it("keeps an HTTP target's secret header in secret storage, never in settings, and sends it only to its origin", async () => {
    await config().update(
      'target',
      { type: 'http', url: `${endpointA.url}/generate`, answerPath: 'text', headers: { 'x-plain': 'visible' }, secretHeaders: ['X-Api-Key'] },
      G,
    );
    await until('the target setting is read', () => api.ctx.settings.target.type === 'http');
    answer = 'hdr-value-7';
    const target = (await plannedTarget(api))!;
    assert.equal(await target.send('hello', CALL), 'ok');
    const seen = endpointA.seen.at(-1)!;
    assert.equal(seen.headers['x-api-key'], 'hdr-value-7');
    assert.equal(seen.headers['x-plain'], 'visible');
    assert.deepEqual(asked, [`Header X-Api-Key for ${new URL(endpointA.url).origin}`]);
    assert.ok(!JSON.stringify(config().inspect('target')).includes('hdr-value-7'), 'the value is not in settings');
  });

  it('treats a base URL whose path holds // as invalid, so no token is looked up or sent for it', async () => {
    await config().update('baseUrl', `${endpointA.url}//${endpointB.url.replace('http://', '')}`, G);
    await config().update('evaluations', [{ evaluationId: 1, kind: 'benchmark', label: 'Smuggled host' }], G);
    await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === 'Smuggled host'));
    const ref = api.ctx.registry.refs.find((r) => r.label === 'Smuggled host')!;
    assert.equal(ref.origin, 'invalid');
  });
});
