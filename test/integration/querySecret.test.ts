import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import { json, scriptedServer } from '../unit/helpers/servers';
import type { ScriptedServer } from '../unit/helpers/servers';
import { plannedTarget } from './plannedTarget';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;
const CALL = { signal: new AbortController().signal, timeoutMs: 5_000 };
const TYPED = 'AIza-typed-QUERY-91c';
const LITERAL_QUERY = 'AIza-settings-QUERY-4e7';
const LITERAL_HEADER = 'hdr-settings-SECRET-0b2';

/** The user's settings.json as the editor wrote it: beside the extension's global storage (User/globalStorage/<id>). */
function userSettingsText(api: TestHandles): string {
  return readFileSync(vscode.Uri.joinPath(api.ctx.extension.globalStorageUri, '..', '..', 'settings.json').fsPath, 'utf8');
}

describe('query-string secrets in the editor: secret storage per origin, never settings', () => {
  let api: TestHandles;
  let endpoint: ScriptedServer;
  let asked: string[];
  const target = () => (api.ctx.settings.target.type === 'http' ? api.ctx.settings.target : undefined);
  const visible = () => `${JSON.stringify(config().inspect('target'))}\n${userSettingsText(api)}`;

  before(async () => {
    api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
    endpoint = await scriptedServer((_req, res) => json(res, 200, { text: 'ok' }));
    api.ctx.askSecret = (title) => {
      asked.push(title);
      return Promise.resolve(TYPED);
    };
  });
  beforeEach(() => (asked = []));
  after(async () => {
    await config().update('target', undefined, G);
    await api.ctx.tokens.clearModelKey(new URL(endpoint.url).origin);
    await endpoint.close();
  });

  it("asks for a secret query parameter's value with its origin named, keeps it in secret storage and adds it only as it sends", async () => {
    const origin = new URL(endpoint.url).origin;
    await config().update('target', { type: 'http', url: `${endpoint.url}/generate?alt=json`, answerPath: 'text', secretQuery: ['key'] }, G);
    await until('the target setting is read', () => target()?.secretQuery?.[0] === 'key');
    assert.equal(await (await plannedTarget(api))!.send('hello', CALL), 'ok');
    assert.equal(endpoint.seen.at(-1)!.path, `/generate?alt=json&key=${TYPED}`);
    assert.deepEqual(asked, [`Query parameter key for ${origin}`]);
    assert.equal(await api.ctx.tokens.getQuery(origin, 'key'), TYPED);
    await (await plannedTarget(api))!.send('again', CALL);
    assert.equal(asked.length, 1, 'not asked again');
    assert.match(userSettingsText(api), /"secretQuery"/, 'the settings file read is the one the target is in');
    assert.ok(!visible().includes(TYPED), 'the value is not in settings');
  });

  it('moves a key written in the URL and a credential written as a plain header out of settings.json, with a word', async () => {
    const origin = new URL(endpoint.url).origin;
    await config().update(
      'target',
      { type: 'http', url: `${endpoint.url}/generate?api_key=${LITERAL_QUERY}&alt=json`, answerPath: 'text', headers: { 'X-Api-Key': LITERAL_HEADER, 'X-Team': 'evals' } },
      G,
    );
    await until('the settings keep names only', () => {
      const t = target();
      return t?.url === `${endpoint.url}/generate?alt=json` && t.secretQuery?.includes('api_key') === true && t.secretHeaders?.includes('X-Api-Key') === true;
    });
    assert.deepEqual(target()!.headers, { 'X-Team': 'evals' });
    await until('settings.json holds no value', () => !visible().includes(LITERAL_QUERY) && !visible().includes(LITERAL_HEADER));
    assert.equal(await (await plannedTarget(api))!.send('hello', CALL), 'ok');
    const seen = endpoint.seen.at(-1)!;
    assert.equal(seen.path, `/generate?alt=json&api_key=${LITERAL_QUERY}`);
    assert.equal(seen.headers['x-api-key'], LITERAL_HEADER);
    assert.equal(seen.headers['x-team'], 'evals');
    assert.deepEqual(asked, [], 'the moved values are in secret storage for this origin');
    assert.equal(await api.ctx.tokens.getHeader(origin, 'X-Api-Key'), LITERAL_HEADER);
  });
});
