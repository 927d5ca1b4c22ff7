import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';
import { filesUnder } from './helpers/secrets';
import { json, scriptedServer } from './helpers/servers';
import type { ScriptedServer } from './helpers/servers';

const HEADER_KEY = 'sk-curl-Hdr-5d1c';
const QUERY_KEY = 'qk-curl-Url-77e0';

/** A model endpoint on loopback, Anthropic-like: the prompt in messages[0].content, the answer in content[0].text. */
function modelServer(): Promise<ScriptedServer> {
  return scriptedServer((_req, res, seen) => {
    const body = JSON.parse(seen.body) as { messages: Array<{ content: string }> };
    json(res, 200, { content: [{ type: 'text', text: `answer to: ${body.messages[0]!.content}` }] });
  });
}

/** An OpenAI-docs-style command pointed at the model server, its key and a query key as variables. */
function curlCommand(modelUrl: string, content: string): string {
  return [
    `curl "${modelUrl}/v1/messages?api_key=$CURL_QUERY_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -H "Authorization: Bearer $CURL_TEST_KEY" \\`,
    `  -H 'anthropic-version: 2023-06-01' \\`,
    `  -d '{"model": "m-1", "max_tokens": 64, "messages": [{"role": "user", "content": "${content}"}]}'`,
  ].join('\n');
}

describe('the CLI reads an http target from a curl command (--from-curl)', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let model: ScriptedServer;
  const env = () => ({ EVAL_RUNNER_TOKEN: sandbox.token, CURL_TEST_KEY: HEADER_KEY, CURL_QUERY_KEY: QUERY_KEY });
  const service = (stateDir: string) => ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  // The file names the variables: with no terminal to ask at, the command line allows them.
  const allowed = ['--allow-env', 'CURL_TEST_KEY', '--allow-env', 'CURL_QUERY_KEY'];

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 6, generationSeconds: 0, evaluationSeconds: 0 });
    model = await modelServer();
  });
  afterEach(async () => {
    await model.close();
    await sandbox.close();
  });

  it('runs the evaluation through the request; the variables reach the endpoint and no file under the state folder', async () => {
    const file = join(tempDir(), 'request.sh');
    writeFileSync(file, curlCommand(model.url, '{{prompt}}'));
    const stateDir = join(tempDir(), 'state');
    const run = await cli(['run', ...service(stateDir), '--target', 'http', '--from-curl', file, '--answer-path', 'content.0.text', ...allowed], env());
    assert.equal(run.code, 0, run.stderr);
    const prompts = seedPrompts('benchmark', 6);
    for (const p of prompts) assert.equal(sandbox.answerOf(1, p.traceId), `answer to: ${p.content}`);
    assert.equal(model.seen.length, prompts.length);
    for (const seen of model.seen) {
      assert.equal(seen.headers.authorization, `Bearer ${HEADER_KEY}`);
      assert.equal(seen.headers['anthropic-version'], '2023-06-01');
      assert.equal(seen.path, `/v1/messages?api_key=${QUERY_KEY}`);
    }
    const status = await cli(['status', ...service(stateDir)], env());
    assert.match(status.stdout, /http: POST http:\/\/127\.0\.0\.1:\d+\/v1\/messages\?api_key=…, answer at content\.0\.text/);
    const files = filesUnder(stateDir);
    assert.ok(files.length > 0, 'the run wrote its journal');
    for (const text of [...files.map((f) => readFileSync(f, 'utf8')), run.stdout, run.stderr, status.stdout]) {
      assert.ok(!text.includes(HEADER_KEY), `the header key leaked: ${text.slice(0, 200)}`);
      assert.ok(!text.includes(QUERY_KEY), `the query key leaked: ${text.slice(0, 200)}`);
    }
  });

  it('reads the command from stdin; without {{prompt}} --prompt-path names the field, and without either it lists them', async () => {
    const command = curlCommand(model.url, 'Hello!');
    const args = ['run', ...service(join(tempDir(), 'state')), '--target', 'http', '--from-curl', '-', '--answer-path', '$.content[0].text', ...allowed];
    const unnamed = await cli(args, env(), undefined, command);
    assert.equal(unnamed.code, 2);
    assert.match(unnamed.stderr, /the body has no \{\{prompt\}\}.*--prompt-path.*Its string fields: \$\.model, \$\.messages\[0\]\.role, \$\.messages\[0\]\.content\./);
    assert.equal(model.seen.length, 0);
    const named = await cli([...args, '--prompt-path', '$.messages[0].content'], env(), undefined, command);
    assert.equal(named.code, 0, named.stderr);
    const bodies = model.seen.map((s) => JSON.parse(s.body) as { model: string; messages: Array<{ role: string; content: string }> });
    assert.deepEqual(bodies.map((b) => b.messages[0]!.content).sort(), seedPrompts('benchmark', 6).map((p) => p.content).sort());
    assert.ok(bodies.every((b) => b.model === 'm-1' && b.messages[0]!.role === 'user'), 'the rest of the body as written');
  });

  it('a variable that is not set is named, and nothing is sent; one in the body is refused', async () => {
    const file = join(tempDir(), 'request.sh');
    writeFileSync(file, curlCommand(model.url, '{{prompt}}'));
    const args = ['run', ...service(join(tempDir(), 'state')), '--target', 'http', '--from-curl', file, '--answer-path', 'content.0.text'];
    const missing = await cli(args, { ...env(), CURL_TEST_KEY: undefined });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /the command uses the environment variable CURL_TEST_KEY, not set here\. Set it and run again\./);
    assert.ok(!missing.stderr.includes(QUERY_KEY));
    writeFileSync(file, `curl ${model.url}/v1/messages -H "Authorization: Bearer $CURL_TEST_KEY" -d "{\\"key\\": \\"$CURL_TEST_KEY\\", \\"q\\": \\"{{prompt}}\\"}"`);
    const inBody = await cli(args, env());
    assert.equal(inBody.code, 2);
    assert.match(inBody.stderr, /the variable CURL_TEST_KEY is in the body; variables are read only in headers and the URL's query/);
    assert.ok(!inBody.stderr.includes(HEADER_KEY));
    assert.equal(model.seen.length, 0, 'nothing was sent');
  });
});
