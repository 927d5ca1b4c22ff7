import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createApiClient, parseBaseUrl } from '../../src/api/client';
import type { PromptItem } from '../../src/api/schemas';
import { csvCell } from '../../src/core/report/exportResults';
import { journalPath } from '../../src/core/journal/journal';
import { redactSecrets, targetSecrets } from '../../src/core/targets/targetSecrets';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';
import { filesUnder } from './helpers/secrets';
import { json, ok, scriptedServer } from './helpers/servers';
import type { ScriptedServer } from './helpers/servers';

const TOKEN = 'pat-Bound-Token-4f1e';

/** A service of our own on loopback: lists the given prompts, accepts every submission, records all. */
async function miniService(items: PromptItem[], answer?: (traceId: string) => { status: number; body: unknown } | undefined) {
  const answers = new Map<string, string>();
  const server = await scriptedServer((_req, res, seen) => {
    if (seen.method === 'GET' && seen.path.startsWith('/api/evaluation/promptsAll')) return json(res, 200, ok(items));
    if (seen.method === 'POST' && seen.path === '/api/evaluation/response') {
      const form = new URLSearchParams(seen.body);
      const traceId = form.get('traceId') ?? '';
      const scripted = answer?.(traceId);
      if (scripted) return json(res, scripted.status, scripted.body);
      answers.set(traceId, form.get('llmResponse') ?? '');
      return json(res, 200, ok('saved'));
    }
    json(res, 404, { code: 'req_404', message: 'no such route', data: null, success: false });
  });
  return { ...server, answers };
}

const svcArgs = (baseUrl: string, stateDir: string, kind = 'benchmark', id = '1') => [
  '--base-url', baseUrl, '--evaluation', id, '--kind', kind, '--state-dir', stateDir,
];

describe('secrets stay with the origin they were given for', function () {
  this.timeout(60_000);
  let foreign: ScriptedServer;
  let service: ScriptedServer;
  before(async () => {
    // The foreign host records every header it receives; nothing should ever reach it.
    foreign = await scriptedServer((_req, res) => json(res, 200, ok([])));
    service = await scriptedServer((_req, res) => json(res, 200, ok([{ traceId: 't1', content: 'hello' }])));
  });
  after(async () => {
    await foreign.close();
    await service.close();
  });

  for (const trick of ['//', '/\\']) {
    it(`refuses a base URL whose path starts with ${trick} before sending anything (exit 2)`, async () => {
      const hostB = foreign.url.replace('http://', '');
      const base = `${service.url}${trick}${hostB}`;
      assert.throws(() => createApiClient({ baseUrl: base, token: TOKEN }), /must not contain "\/\/" or "\\"/);
      const r = await cli(['prompts', '--base-url', base, '--evaluation', '1', '--kind', 'benchmark'], { EVAL_RUNNER_TOKEN: TOKEN });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--base-url: The base URL's path must not contain/);
      assert.equal(foreign.seen.length, 0, 'the foreign host received nothing');
      assert.equal(service.seen.length, 0, 'nothing was sent at all');
    });
  }

  it('builds request URLs under a base path, on the base origin only', async () => {
    assert.equal(parseBaseUrl('https://svc.example/root/').pathname, '/root/');
    const r = await cli(['prompts', '--base-url', `${service.url}/root`, '--evaluation', '1', '--kind', 'benchmark'], { EVAL_RUNNER_TOKEN: TOKEN });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(service.seen.at(-1)!.path, '/root/api/evaluation/promptsAll?evaluationId=1');
    assert.equal(foreign.seen.length, 0);
  });

  it("redacts the token from the service's request code as well as its message, in errors and in the journal", async () => {
    const echoing = await scriptedServer((req, res, seen) => {
      const auth = req.headers.authorization ?? '';
      if (seen.method === 'GET') return json(res, 200, ok([{ traceId: 't1', content: 'hi' }, { traceId: 't2', content: 'ho' }]));
      if (new URLSearchParams(seen.body).get('traceId') === 't1') return json(res, 200, { code: `req_${auth}`, message: `ok ${auth}`, data: `saved ${auth}`, success: true });
      return json(res, 400, { code: `req_${auth}`, message: 'rejected', data: null, success: false });
    });
    const stateDir = tempDir();
    try {
      const r = await cli(['run', ...svcArgs(echoing.url, stateDir), '--target', 'echo'], { EVAL_RUNNER_TOKEN: TOKEN });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout + r.stderr, /req_Bearer \[redacted\]/);
      const journal = filesUnder(stateDir).map((f) => readFileSync(f, 'utf8')).join('\n');
      assert.match(journal, /"code":"req_Bearer \[redacted\]"/);
      for (const text of [r.stdout, r.stderr, journal]) assert.ok(!text.includes(TOKEN), 'the token was printed or journaled');
    } finally {
      await echoing.close();
    }
  });
});

describe('a model key goes only to the endpoint it was entered for (CLI)', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 3, evaluationSeconds: 0 });
  });
  after(() => sandbox.close());

  it('sends OPENAI_API_KEY to no endpoint but OpenAI, and says how to name the key when one answers 401', async () => {
    const model = await scriptedServer((_req, res) => json(res, 401, { error: { message: 'missing key' } }));
    try {
      const r = await cli(
        ['run', ...svcArgs(sandbox.baseUrl, tempDir()), '--target', 'openai', '--openai-base-url', `${model.url}/v1`, '--model', 'm'],
        { EVAL_RUNNER_TOKEN: sandbox.token, OPENAI_API_KEY: 'sk-default-variable-key' },
      );
      assert.equal(r.code, 1);
      assert.ok(model.seen.length > 0);
      for (const s of model.seen) assert.equal(s.headers.authorization, undefined, 'no key was sent to a non-OpenAI endpoint');
      assert.match(r.stdout + r.stderr, /--api-key-env NAME/);
    } finally {
      await model.close();
    }
  });

  it('sends the key named by --api-key-env, refuses an unset one, and keeps keys and headers out of argv', async () => {
    const model = await scriptedServer((_req, res) => json(res, 200, { choices: [{ message: { content: 'fine' } }] }));
    const env = { EVAL_RUNNER_TOKEN: sandbox.token, MY_MODEL_KEY: 'sk-named-key-1', MY_HDR: 'hv-42' };
    try {
      const target = ['--target', 'openai', '--openai-base-url', `${model.url}/v1`, '--model', 'm'];
      const r = await cli(['run', ...svcArgs(sandbox.baseUrl, tempDir()), ...target, '--api-key-env', 'MY_MODEL_KEY', '--header-env', 'X-Team=MY_HDR'], env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(model.seen[0]!.headers.authorization, 'Bearer sk-named-key-1');
      assert.equal(model.seen[0]!.headers['x-team'], 'hv-42');
      const unset = await cli(['run', ...svcArgs(sandbox.baseUrl, tempDir()), ...target, '--api-key-env', 'NOT_SET_ANYWHERE'], env);
      assert.equal(unset.code, 2);
      assert.match(unset.stderr, /NOT_SET_ANYWHERE is not set/);
      const badHeader = await cli(['run', ...svcArgs(sandbox.baseUrl, tempDir()), ...target, '--header-env', 'X-Team=ALSO_NOT_SET'], env);
      assert.equal(badHeader.code, 2);
      assert.match(badHeader.stderr, /ALSO_NOT_SET is not set/);
    } finally {
      await model.close();
    }
  });

  it('warns once when a key is about to cross a network over plain http, and not on loopback', async () => {
    // 192.0.2.x (TEST-NET) is never loopback; the run stops at the unknown evaluation before any model call.
    const env = { EVAL_RUNNER_TOKEN: sandbox.token, K: 'sk-xyz' };
    const remote = await cli(
      ['run', ...svcArgs(sandbox.baseUrl, tempDir(), 'benchmark', '99'), '--target', 'openai', '--openai-base-url', 'http://192.0.2.77:9/v1', '--model', 'm', '--api-key-env', 'K'],
      env,
    );
    assert.equal(remote.stderr.match(/warning: The model key goes over plain http to 192\.0\.2\.77:9/g)?.length, 1, remote.stderr);
    const local = await cli(
      ['run', ...svcArgs(sandbox.baseUrl, tempDir(), 'benchmark', '99'), '--target', 'openai', '--openai-base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--api-key-env', 'K'],
      env,
    );
    assert.doesNotMatch(local.stderr, /plain http/);
  });
});

describe('target secrets are never echoed, whatever the endpoint says', function () {
  this.timeout(60_000);
  const SHORT = 'Kx!9Q'; // under 8 characters: redacted all the same
  const QUERY_KEY = 'QkeyQ-77';

  it('redacts header and query values from non-JSON 200s and error bodies; submits fixed words for an error', async () => {
    // The endpoint quotes every request header and its URL back, as plain text with 200 (not JSON).
    const model = await scriptedServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`You sent ${JSON.stringify(req.headers)} to ${req.url}`);
    });
    const service = await miniService([{ traceId: 'a', content: 'one' }, { traceId: 'b', content: 'two' }]);
    const stateDir = tempDir();
    const exportFile = join(tempDir(), 'out.csv');
    try {
      const env = { EVAL_RUNNER_TOKEN: TOKEN, SHORT_SECRET: SHORT };
      const run = await cli(
        ['run', ...svcArgs(service.url, stateDir), '--target', 'http', '--http-url', `${model.url}/gen?key=${QUERY_KEY}`, '--answer-path', 'text',
          '--header-env', 'X-Api-Key=SHORT_SECRET', '--on-target-error', 'submit', '--json'],
        env,
      );
      assert.equal(run.code, 0, run.stderr);
      assert.ok(model.seen.some((s) => s.headers['x-api-key'] === SHORT), 'the endpoint did get its header');
      assert.deepEqual([...service.answers.values()], ['target error: not JSON', 'target error: not JSON']);
      const failing = await cli(
        ['run', ...svcArgs(service.url, tempDir()), '--target', 'http', '--http-url', `${model.url}/gen?key=${QUERY_KEY}`, '--answer-path', 'text',
          '--header-env', 'X-Api-Key=SHORT_SECRET'],
        env,
      );
      assert.equal(failing.code, 1);
      assert.match(failing.stdout + failing.stderr, /did not answer with JSON: You sent .*\[redacted\]/);
      const exported = await cli(['export', ...svcArgs(service.url, stateDir), '--format', 'csv', '--out', exportFile], env);
      assert.equal(exported.code, 0);
      const everything = [run.stdout, run.stderr, failing.stdout, failing.stderr, readFileSync(exportFile, 'utf8'),
        ...filesUnder(stateDir).map((f) => readFileSync(f, 'utf8')), ...service.answers.values()];
      for (const text of everything) {
        assert.ok(!text.includes(SHORT), `the header value leaked: ${text.slice(0, 300)}`);
        assert.ok(!text.includes(QUERY_KEY), `the query key leaked: ${text.slice(0, 300)}`);
      }
    } finally {
      await model.close();
      await service.close();
    }
  });

  it('redacts every secret value, longest first, with no length floor', () => {
    const secrets = targetSecrets({ authorization: 'Bearer ab', 'x-k': 'Q', 'content-type': 'application/json' }, 'http://h/p?key=zz9');
    assert.deepEqual(secrets, ['Bearer ab', 'zz9', 'ab', 'Q']);
    assert.equal(redactSecrets('Bearer ab then Q and zz9; application/json', secrets), '[redacted] then [redacted] and [redacted]; application/json');
  });

  it("keeps the service token, the model key variables and header variables out of a command's environment", async () => {
    const service = await miniService([{ traceId: 'env', content: 'print your environment' }]);
    try {
      const env = { EVAL_RUNNER_TOKEN: TOKEN, OPENAI_API_KEY: 'sk-openai-default', NAMED_KEY: 'sk-named-99', HDR_VAR: 'hdr-secret-5', PLAIN_VAR: 'plain-visible-3' };
      const r = await cli(
        ['run', ...svcArgs(service.url, tempDir()), '--target', 'command', '--command', 'env', '--api-key-env', 'NAMED_KEY', '--header-env', 'X-H=HDR_VAR'],
        env,
      );
      assert.equal(r.code, 0, r.stderr);
      const answer = service.answers.get('env')!;
      assert.match(answer, /PLAIN_VAR=plain-visible-3/, 'the rest of the environment is there');
      for (const secret of [TOKEN, 'sk-openai-default', 'sk-named-99', 'hdr-secret-5']) assert.ok(!answer.includes(secret), `${secret} reached the command`);
    } finally {
      await service.close();
    }
  });
});

describe('exports are safe to open in a spreadsheet, and files are owner-only', function () {
  this.timeout(60_000);

  it('prefixes formula cells with an apostrophe (trace ids too), keeps RFC 4180 quoting, and adds a BOM on request', async () => {
    const items = [
      { traceId: '=HYPERLINK("http://evil","x")', content: '+1+1' },
      { traceId: '@SUM(A1)', content: '-2' },
      { traceId: 'tab', content: '\tcmd' },
      { traceId: 'cr', content: '\rcmd' },
      { traceId: 'plain', content: 'a, "quoted" answer' },
    ];
    const service = await miniService(items);
    const stateDir = tempDir();
    const file = join(tempDir(), 'excel.csv');
    try {
      const env = { EVAL_RUNNER_TOKEN: TOKEN };
      assert.equal((await cli(['run', ...svcArgs(service.url, stateDir), '--target', 'echo'], env)).code, 0);
      writeFileSync(file, 'old contents', { mode: 0o644 });
      const r = await cli(['export', ...svcArgs(service.url, stateDir), '--format', 'csv', '--bom', '--out', file], env);
      assert.equal(r.code, 0, r.stderr);
      const text = readFileSync(file, 'utf8');
      assert.ok(text.startsWith('\uFEFFtraceId,prompt,answer,'), 'a BOM, then the header');
      const lines = text.slice(1).split('\r\n');
      assert.ok(lines[1]!.startsWith(`"'=HYPERLINK(""http://evil"",""x"")",'+1+1,'+1+1,submitted`), lines[1]);
      assert.ok(lines[2]!.startsWith(`'@SUM(A1),'-2,'-2,`), lines[2]);
      assert.ok(lines[3]!.startsWith(`tab,'\tcmd,'\tcmd,`), lines[3]);
      assert.ok(text.includes(`cr,"'\rcmd","'\rcmd",`));
      assert.ok(lines.some((l) => l.startsWith('plain,"a, ""quoted"" answer","a, ""quoted"" answer",')));
      assert.equal(statSync(file).mode & 0o777, 0o600, 'an existing export file is made owner-only');
      const journal = journalPath(stateDir, { origin: new URL(service.url).origin, kind: 'benchmark', evaluationId: 1 });
      assert.equal(statSync(journal).mode & 0o777, 0o600);
      assert.equal(statSync(dirname(journal)).mode & 0o777, 0o700, 'the journal directory is owner-only');
    } finally {
      await service.close();
    }
  });

  it('leaves numbers and harmless text alone', () => {
    assert.equal(csvCell(-3), '-3');
    assert.equal(csvCell('a=b'), 'a=b');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell('-x'), "'-x");
  });
});

describe('text from the service never drives the terminal', function () {
  this.timeout(60_000);

  it('prints trace ids, prompts and service messages with their control characters made visible', async () => {
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil';
    const service = await miniService([{ traceId: `t${hostile}`, content: `prompt ${hostile}` }], () => ({
      status: 400,
      body: { code: 'req_1', message: `nope ${hostile}`, data: null, success: false },
    }));
    try {
      const env = { EVAL_RUNNER_TOKEN: TOKEN };
      const listed = await cli(['prompts', ...svcArgs(service.url, tempDir()).slice(0, 6)], env);
      const asJson = await cli(['prompts', ...svcArgs(service.url, tempDir()).slice(0, 6), '--json'], env);
      const run = await cli(['run', ...svcArgs(service.url, tempDir()), '--target', 'echo'], env);
      assert.equal(run.code, 1);
      assert.match(listed.stdout, /t\\u001b\]0;pwned\\u0007/);
      assert.deepEqual((JSON.parse(asJson.stdout) as PromptItem[])[0]!.traceId, `t${hostile}`, 'JSON keeps the value exactly');
      for (const text of [listed.stdout, asJson.stdout, run.stdout, run.stderr]) {
        assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/, JSON.stringify(text.slice(0, 300)));
      }
      assert.match(run.stdout + run.stderr, /nope \\u001b/);
    } finally {
      await service.close();
    }
  });
});
