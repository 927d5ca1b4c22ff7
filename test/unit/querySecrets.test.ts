import assert from 'node:assert/strict';
import { TargetConfigError, configFromFlags, configSecrets, createTarget, flagsOfConfig, parseRunConfig, secretVariables, secretsFromEnv, specOf, targetIdentity } from '../../src/core';
import type { TargetConfig } from '../../src/core';
import { parseCommandArgs } from '../../src/cli/args';
import { TARGET_OPTIONS } from '../../src/cli/targetOptions';
import { json, scriptedServer } from './helpers/servers';

const KEY = 'AIza-unit-QUERY-7d3';
const CALL = { signal: new AbortController().signal, timeoutMs: 10_000 };

function fromFlags(args: string[]): TargetConfig {
  return configFromFlags('http', parseCommandArgs(['--target', 'http', '--http-url', 'https://g.example/v1/gen?alt=json', '--answer-path', 'answer', ...args], TARGET_OPTIONS));
}

describe("the http target's secret query parameters (secretQuery): names in the config, values apart", () => {
  it("--query-env 'key=VAR' names the parameter and its variable; the spec keeps the name, the url stays without it", () => {
    const config = fromFlags(['--query-env', 'key=MY_QUERY_KEY', '--query-env', 'sig = SIG_VAR']);
    assert.deepEqual(config, {
      type: 'http',
      url: 'https://g.example/v1/gen?alt=json',
      answerPath: 'answer',
      secretQuery: ['key', 'sig'],
      queryEnv: { key: 'MY_QUERY_KEY', sig: 'SIG_VAR' },
    });
    assert.deepEqual(specOf(config), { type: 'http', url: 'https://g.example/v1/gen?alt=json', answerPath: 'answer', secretQuery: ['key', 'sig'] }, 'the variables are no part of the spec');
    assert.deepEqual(flagsOfConfig(config as never).slice(-4), ['--query-env', 'key=MY_QUERY_KEY', '--query-env', 'sig=SIG_VAR'], 'written back as names and variables');
    assert.deepEqual(secretVariables(config, false), ['MY_QUERY_KEY', 'SIG_VAR']);
    assert.deepEqual(configSecrets({ target: config as never }), ['EVAL_RUNNER_TOKEN', 'MY_QUERY_KEY', 'SIG_VAR'], 'Copy as CLI Command says which to set');
    assert.throws(() => fromFlags(['--query-env', 'key']), (e: Error) => e instanceof TargetConfigError && /--query-env must look like 'key=ENV_VAR'/.test(e.message));
  });

  it('values come from the environment (default variable: the name, api_key → API_KEY); an unset one is named, never quoted', () => {
    const config = { type: 'http', url: 'https://g.example/v1', answerPath: 'a', secretQuery: ['api_key', 'key'], queryEnv: { key: 'MY_QUERY_KEY' } } as const;
    const { secrets } = secretsFromEnv(config, false, { API_KEY: ' k-1 ', MY_QUERY_KEY: KEY });
    assert.deepEqual(secrets.query, { api_key: 'k-1', key: KEY });
    assert.throws(() => secretsFromEnv(config, false, { API_KEY: 'k-1' }), /--query-env key=MY_QUERY_KEY: the environment variable MY_QUERY_KEY is not set\./);
  });

  it('a config file takes secretQuery and queryEnv (a map whose keys are parameter names, "key" among them)', () => {
    const target = { type: 'http', url: 'https://g.example/v1', answerPath: 'a', secretQuery: ['key'], queryEnv: { key: 'MY_QUERY_KEY' } };
    assert.deepEqual(parseRunConfig({ target }, 'config.json').target, target);
    assert.throws(() => parseRunConfig({ target: { ...target, key: KEY } }, 'config.json'), /holds "target\.key": secrets never go in the config file/, 'a value is still refused');
  });

  it('the value is added to the URL only as the request is sent: the identity names the parameter, an echo is redacted', async () => {
    const model = await scriptedServer((req, res, _seen, index) => {
      if (index === 0) return json(res, 401, { error: `wrong key in ${req.url}` });
      json(res, 200, { answer: 'ok' });
    });
    const spec = { type: 'http' as const, url: `${model.url}/v1/gen?alt=json`, answerPath: 'answer', secretQuery: ['key'] };
    const target = createTarget(spec, { headers: {}, query: { key: KEY } }, { connections: 1 });
    try {
      const failed = await target.send('hi', CALL).then(
        () => assert.fail('the 401 is an error'),
        (error: Error) => error.message,
      );
      assert.match(failed, /wrong key in \/v1\/gen\?alt=\[redacted\]&key=\[redacted\]/);
      assert.ok(!failed.includes(KEY));
      assert.equal(await target.send('hi', CALL), 'ok');
      assert.deepEqual(model.seen.map((s) => s.path), [`/v1/gen?alt=json&key=${KEY}`, `/v1/gen?alt=json&key=${KEY}`]);
    } finally {
      await target.close?.();
      await model.close();
    }
    const identity = targetIdentity(spec);
    assert.match(identity.description, /\/v1\/gen\?alt=…&key=…/);
    assert.ok(!JSON.stringify(identity).includes(KEY));
    assert.throws(() => createTarget(spec, { headers: {} }, { connections: 1 }), /secret query parameter key has no value/, 'no request goes out without it');
  });
});
