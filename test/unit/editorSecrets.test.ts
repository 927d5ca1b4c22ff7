import assert from 'node:assert/strict';
import * as reader from '../../src/core/targets/http/curlRequest';
import { configSecrets, runCommandLine } from '../../src/core';
import { curlImport, curlVariableProblem, queryVariableNames } from '../../src/extension/targets/curlImport';
import { movedSettingsSecrets, resolveSettings, runConfigFor } from '../../src/extension/settings/settingsModel';
import type { TargetSettings } from '../../src/extension/settings/settingsModel';

const QUERY_KEY = 'AIzaSy-IMPORT-QUERY-3f9';
const TEAM = 'team-credential-77ab';

/** The editor's import of a pasted command, as askCurl makes it: read as written, then with the values typed in. */
function imported(command: string, values: Record<string, string>) {
  const shape = reader.readCurl(command);
  const request = reader.readCurl(command, { variable: (name) => values[name]! });
  return curlImport(reader, request, request.bodyTemplate ?? '', 'candidates.0.content.parts.0.text', queryVariableNames(shape));
}

describe("the editor's curl import: what goes to settings, what to secret storage", () => {
  it('a Gemini-style ?key=$VAR becomes a secret query parameter; every header but the plain ones is secret', () => {
    const plan = imported(
      `curl "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?alt=json&key=$GEMINI_KEY" -H 'Content-Type: application/json' -H 'anthropic-version: 2023-06-01' -H 'X-Team: ${TEAM}' -d '{"contents": [{"parts": [{"text": "{{prompt}}"}]}]}'`,
      { GEMINI_KEY: QUERY_KEY },
    );
    assert.deepEqual(plan.target, {
      type: 'http',
      url: 'https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?alt=json',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      secretHeaders: ['x-team'],
      secretQuery: ['key'],
      bodyTemplate: '{"contents": [{"parts": [{"text": "{{prompt}}"}]}]}',
      answerPath: 'candidates.0.content.parts.0.text',
    });
    assert.equal(plan.origin, 'https://generativelanguage.googleapis.com');
    assert.deepEqual(plan.secrets, [
      { in: 'header', name: 'x-team', value: TEAM },
      { in: 'query', name: 'key', value: QUERY_KEY },
    ]);
    assert.deepEqual(plan.destinations, ['x-team → generativelanguage.googleapis.com, in secret storage', '?key= → generativelanguage.googleapis.com, in secret storage']);
    assert.deepEqual(plan.movedQuery, [], 'written as a variable: nothing to tell');
    const settings = JSON.stringify(plan.target);
    for (const secret of [QUERY_KEY, TEAM]) assert.ok(!settings.includes(secret), `${secret} would be in settings.json`);
  });

  it('a literal value under a credential name in the query is moved to secret storage too, and the user told', () => {
    const plan = imported(`curl "https://fn.example.net/api/answer?code=fn-LITERAL-key&page=2" -d '{"q": "{{prompt}}"}'`, {});
    assert.equal(plan.target.url, 'https://fn.example.net/api/answer?page=2');
    assert.deepEqual(plan.target.secretQuery, ['code']);
    assert.deepEqual(plan.secrets, [{ in: 'query', name: 'code', value: 'fn-LITERAL-key' }]);
    assert.deepEqual(plan.movedQuery, ['code']);
  });

  it('refuses a variable in the body or the address, and takes one in a header or the query', () => {
    const problem = (command: string) => curlVariableProblem(reader.readCurl(command).variables);
    assert.deepEqual(problem(`curl https://h.example/x -d '{"user": "'"$ME"'", "q": "{{prompt}}"}'`), { name: 'ME', in: 'body' });
    assert.deepEqual(problem(`curl "https://$HOST/x" -d '{"q": "{{prompt}}"}'`), { name: 'HOST', in: 'url' });
    assert.equal(problem(`curl "https://h.example/x?key=$K" -H "Authorization: Bearer $T" -d '{"q": "{{prompt}}"}'`), undefined);
  });
});

describe('a credential written into the settings leaves them', () => {
  it("moves a header that looks secret (by name or value) and a key in the http URL's query; plain headers stay", () => {
    const target: TargetSettings = {
      type: 'http',
      url: 'https://api.example.com/v1/gen?alt=json&api_key=AIza-settings-1',
      answerPath: 'a',
      headers: { 'X-Api-Key': 'k-1', 'X-Team': 'blue', 'X-Forward': 'Bearer abc.def', 'X-Trace': 'sk-proj-00aa11', 'content-type': 'application/json' },
      secretHeaders: ['x-org'],
    };
    const moved = movedSettingsSecrets(target)!;
    assert.equal(moved.origin, 'https://api.example.com');
    assert.deepEqual(moved.headers, { 'X-Api-Key': 'k-1', 'X-Forward': 'Bearer abc.def', 'X-Trace': 'sk-proj-00aa11' });
    assert.deepEqual(moved.query, { api_key: 'AIza-settings-1' });
    assert.deepEqual(moved.target, {
      type: 'http',
      url: 'https://api.example.com/v1/gen?alt=json',
      answerPath: 'a',
      headers: { 'X-Team': 'blue', 'content-type': 'application/json' },
      secretHeaders: ['x-org', 'X-Api-Key', 'X-Forward', 'X-Trace'],
      secretQuery: ['api_key'],
    });
    const openai = movedSettingsSecrets({ type: 'openai', baseUrl: 'https://llm.example/v1', model: 'm', headers: { Authorization: 'Bearer sk-x' } })!;
    assert.deepEqual(openai.target, { type: 'openai', baseUrl: 'https://llm.example/v1', model: 'm', secretHeaders: ['Authorization'] });
    assert.equal(movedSettingsSecrets({ type: 'http', url: 'https://h.example/x?page=2', answerPath: 'a', headers: { 'X-Team': 'blue' } }), undefined, 'nothing to move');
  });

  it('Copy as CLI Command: the config names the secret headers and query parameters (their variables said beside it), never a value', () => {
    const target = { type: 'http', url: 'https://api.example.com/v1/gen?key=AIza-copy-SECRET', answerPath: 'a', headers: { authorization: 'Bearer copy-SECRET-2' }, secretQuery: ['sig'] };
    const settings = resolveSettings({ effective: (key) => (key === 'target' ? target : undefined), user: () => undefined }, true, '/tmp/state');
    const config = runConfigFor({ baseUrl: 'https://svc.example', evaluationId: 1, kind: 'benchmark', label: 'b' }, settings, false);
    assert.ok(!('problem' in config));
    assert.deepEqual(config.target, {
      type: 'http',
      url: 'https://api.example.com/v1/gen',
      answerPath: 'a',
      secretHeaders: ['authorization'],
      secretQuery: ['sig', 'key'],
    });
    assert.deepEqual(configSecrets(config), ['EVAL_RUNNER_TOKEN', 'AUTHORIZATION', 'SIG', 'KEY']);
    for (const text of [JSON.stringify(config), runCommandLine(config)]) assert.ok(!text.includes('SECRET'), text);
  });
});
