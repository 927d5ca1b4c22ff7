import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ApprovalStore, approveFileUses, terminalAsker, userConfigDir } from '../../src/cli/allowedEnv';
import { UsageError } from '../../src/cli/exitCodes';
import { curlReads, useLines } from '../../src/cli/secretUses';
import type { NamingFile } from '../../src/cli/secretUses';
import { approveTokenOrigin, baseUrlFile, tokenLine } from '../../src/cli/tokenOrigin';
import { targetPlan } from '../../src/cli/targetOptions';
import { runCommandLine, parseRunConfig } from '../../src/core/options/runConfig';
import { secretReads } from '../../src/core/targets/kinds/secretSources';
import { variableBoundTo, variableRefusal } from '../../src/core/targets/variableOwners';
import { tempDir } from './helpers/runs';

describe("secret variables have an owner: the service token is the service's, a provider's key its provider's", () => {
  it('refuses the service token for any target (whatever its case), and a bound key for another origin only', () => {
    for (const name of ['EVAL_RUNNER_TOKEN', 'eval_runner_token']) assert.match(variableRefusal(name, 'https://m.example')!, new RegExp(`^${name} holds the service's token, which goes to the service only`));
    assert.equal(variableRefusal('OPENAI_API_KEY', 'https://api.openai.com'), undefined);
    assert.equal(
      variableRefusal('OPENAI_API_KEY', 'http://127.0.0.1:8080'),
      "OPENAI_API_KEY is https://api.openai.com's key and goes there only, not to http://127.0.0.1:8080. Put this endpoint's key in a variable of its own.",
    );
    assert.match(variableRefusal('ANTHROPIC_API_KEY', 'https://api.openai.com')!, /^ANTHROPIC_API_KEY is https:\/\/api\.anthropic\.com's key/);
    assert.equal(variableRefusal('GITHUB_TOKEN', 'https://m.example'), undefined, 'a variable of no provider is the user to allow');
  });

  it('lists every (variable, place) a config reads; the key named by no one is the one bound to the endpoint', () => {
    assert.deepEqual(secretReads({ baseUrl: 'https://api.openai.com/v1', secretHeaders: ['X-Api-Key', 'X-Org'], headerEnv: { 'X-Org': 'ORG' } }, true), [
      { variable: 'OPENAI_API_KEY', place: { apiKey: true }, byDefault: true },
      { variable: 'X_API_KEY', place: { header: 'X-Api-Key' } },
      { variable: 'ORG', place: { header: 'X-Org' } },
    ]);
    assert.equal(variableBoundTo('https://api.anthropic.com'), 'ANTHROPIC_API_KEY');
    assert.deepEqual(secretReads({ baseUrl: 'https://api.anthropic.com/v1/' }, true), [{ variable: 'ANTHROPIC_API_KEY', place: { apiKey: true }, byDefault: true }]);
    assert.deepEqual(secretReads({ baseUrl: 'https://m.example/v1', apiKeyEnv: 'K' }, true), [{ variable: 'K', place: { apiKey: true } }]);
    assert.deepEqual(secretReads({ baseUrl: 'https://m.example/v1' }, true), [], 'another endpoint gets no key unnamed');
  });

  it("finds a curl command's variables in its headers (-u too) and query, reading no value", () => {
    const text = `curl "https://m.example/v1?key=$QK&plain=1" -H "Authorization: Bearer \${BEARER}" -H "X-Team: $TEAM" -u "ann:$PW"`;
    // -u takes the Authorization header's place: BEARER is not sent.
    assert.deepEqual(curlReads(text), [
      { variable: 'PW', place: { header: 'authorization' } },
      { variable: 'TEAM', place: { header: 'x-team' } },
      { variable: 'QK', place: { query: 'key' } },
    ]);
    assert.deepEqual(curlReads(`curl https://m.example -H "Authorization: Bearer $BEARER"`), [{ variable: 'BEARER', place: { header: 'authorization' } }]);
  });

  it('says where each variable goes, one line each: the host for https, the whole origin for plain http', () => {
    const uses = [
      { variable: 'MY_KEY', place: { header: 'X-Api-Key' } },
      { variable: 'QK', place: { query: 'key' } },
      { variable: 'MODEL_KEY', place: { apiKey: true as const } },
    ];
    assert.deepEqual(useLines(uses, 'https://api.example.com'), [
      'MY_KEY → api.example.com, in the header X-Api-Key',
      'QK → api.example.com, in the query (key)',
      'MODEL_KEY → api.example.com, as the API key',
    ]);
    assert.deepEqual(useLines(uses.slice(0, 1), 'http://127.0.0.1:8080'), ['MY_KEY → http://127.0.0.1:8080, in the header X-Api-Key']);
  });

  it('a copied command line allows the variables its config file names to its origin only, not the one a rule binds', () => {
    const http = parseRunConfig({ target: { type: 'http', url: 'https://m.example/v1', answerPath: 'a', secretHeaders: ['X-Api-Key', 'X-Org'], headerEnv: { 'X-Org': 'ORG' } } }, 'test');
    // Each to the endpoint's origin only: a later change to the file's url cannot move them.
    assert.equal(runCommandLine(http, 'eval.json'), 'eval-runner run --config eval.json --allow-env X_API_KEY=https://m.example --allow-env ORG=https://m.example');
    const openai = parseRunConfig({ target: { type: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o' } }, 'test');
    assert.equal(runCommandLine(openai, 'eval.json'), 'eval-runner run --config eval.json');
    // The service is the user's, on the line: a later change to the file's baseUrl cannot steer the token.
    const service = parseRunConfig({ baseUrl: 'https://evals.example.com', target: { type: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o' } }, 'test');
    assert.equal(runCommandLine(service, 'eval.json'), 'eval-runner run --config eval.json --base-url https://evals.example.com');
  });
});

describe('a variable named by a file is asked about once per file content and origin', () => {
  const env = { MY_KEY: 'mk-value-1' };
  let dir: string;
  let store: ApprovalStore;
  let questions: string[];
  const yes = (question: string) => {
    questions.push(question);
    return Promise.resolve(true);
  };
  /** The plan of --from-curl FILE, then its approval with this asker (or none: no terminal). */
  const approve = async (file: string, ask?: (q: string) => Promise<boolean>, allowEnv: string[] = []) => {
    const v = { target: 'http', 'from-curl': file, 'answer-path': 'a' };
    const plan = targetPlan(v, env, { own: v });
    await approveFileUses(plan.uses, plan.origin!, { allowEnv, store, ...(ask ? { ask } : {}) });
  };
  const curl = (url: string) => `curl ${url} -H "X-Key: $MY_KEY" -d '{"q": "{{prompt}}"}'`;

  beforeEach(() => {
    dir = tempDir();
    store = new ApprovalStore(join(dir, 'config', 'eval-runner', 'allowed-env.json'));
    questions = [];
  });

  it('asks at a terminal, remembers a yes in an owner-only file, asks nothing the second time, and again when the file changes', async () => {
    const file = join(dir, 'req.sh');
    writeFileSync(file, curl('https://m.example/v1'));
    await approve(file, yes);
    assert.equal(questions.length, 1);
    assert.match(questions[0]!, /^--from-curl .*req\.sh names the variable MY_KEY, whose value it would send:\n {2}MY_KEY → m\.example, in the header x-key\nSend it to https:\/\/m\.example\? .*\[y\/N\] $/);
    if (process.platform !== 'win32') {
      assert.equal(statSync(store.path).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir, 'config', 'eval-runner')).mode & 0o777, 0o700);
    }
    await approve(file, yes);
    assert.equal(questions.length, 1, 'the second run asks nothing');
    await approve(file, undefined);
    writeFileSync(file, curl('https://m.example/v2'));
    await approve(file, yes);
    assert.equal(questions.length, 2, 'the changed file is asked about again');
    writeFileSync(file, curl('https://other.example/v2'));
    await assert.rejects(approve(file, undefined), /--allow-env MY_KEY/, 'another origin is another approval');
  });

  it('a no stops the run and is not remembered; with no terminal --allow-env is the way', async () => {
    const file = join(dir, 'req.sh');
    writeFileSync(file, curl('https://m.example/v1'));
    await assert.rejects(approve(file, () => Promise.resolve(false)), (e: Error) => e instanceof UsageError && /^Not allowed: nothing was sent\./.test(e.message));
    await assert.rejects(approve(file, undefined), (e: Error) => e instanceof UsageError && /add --allow-env MY_KEY=https:\/\/m\.example to the command line if you trust this file\. Nothing was sent\.$/.test(e.message));
    await approve(file, undefined, ['MY_KEY']);
    await approve(file, yes);
    assert.equal(questions.length, 1, '--allow-env remembered nothing');
  });

  it("a provider's key for its own API, as its docs write the command, needs no question", async () => {
    const file = join(dir, 'openai.sh');
    writeFileSync(file, `curl https://api.openai.com/v1/chat/completions -H "Authorization: Bearer $OPENAI_API_KEY" -d '{"q": "{{prompt}}"}'`);
    const v = { target: 'http', 'from-curl': file, 'answer-path': 'a' };
    const plan = targetPlan(v, { OPENAI_API_KEY: 'sk-1' }, { own: v });
    await approveFileUses(plan.uses, plan.origin!, { allowEnv: [], store });
    assert.deepEqual(plan.uses.map((u) => u.variable), ['OPENAI_API_KEY']);
  });

  it('asks only where stdin and stderr are terminals, and takes y or yes', async () => {
    const stream = (isTTY: boolean) => Object.assign(new PassThrough(), { isTTY }) as unknown as NodeJS.ReadStream & NodeJS.WriteStream;
    assert.equal(terminalAsker(stream(false), stream(true)), undefined);
    assert.equal(terminalAsker(stream(true), stream(false)), undefined);
    for (const [answer, expected] of [['y', true], ['Yes', true], ['', false], ['n', false]] as const) {
      const input = stream(true);
      const ask = terminalAsker(input, stream(true))!;
      const answered = ask('Send it? [y/N] ');
      input.write(`${answer}\n`);
      assert.equal(await answered, expected, answer);
    }
  });

  it("keeps its answers in the user's config folder, never the state folder", () => {
    assert.equal(userConfigDir({ XDG_CONFIG_HOME: '/x/cfg' }, 'linux', '/home/u'), join('/x/cfg', 'eval-runner'));
    assert.equal(userConfigDir({}, 'linux', '/home/u'), join('/home/u', '.config', 'eval-runner'));
    assert.equal(userConfigDir({}, 'darwin', '/Users/u'), join('/Users/u', 'Library', 'Preferences', 'eval-runner'));
    assert.equal(userConfigDir({ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32', 'C:\\Users\\u'), join('C:\\Users\\u\\AppData\\Roaming', 'eval-runner'));
  });
});

describe("a config file's base URL gets the service token only once allowed, remembered per file content and origin", () => {
  const file = (text: string): NamingFile => ({ flag: '--config', path: 'eval.json', sha256: createHash('sha256').update(text).digest('hex') });
  const config = (text: string) => ({ file: file(text), count: 2 });
  let store: ApprovalStore;
  let questions: string[];
  const yes = (question: string) => {
    questions.push(question);
    return Promise.resolve(true);
  };
  const approve = (f: NamingFile, baseUrl: string, ask?: (q: string) => Promise<boolean>, allowEnv: string[] = []) =>
    approveTokenOrigin(baseUrl, f, { allowEnv, store, ...(ask ? { ask } : {}) });

  beforeEach(() => {
    store = new ApprovalStore(join(tempDir(), 'allowed-env.json'));
    questions = [];
  });

  it('the base URL is the file\'s only when the file chose it: not --base-url, not the same origin as EVAL_RUNNER_BASE_URL', () => {
    const c = config('{"baseUrl": "https://evil.example"}');
    const v = { 'base-url': 'https://evil.example' };
    assert.equal(baseUrlFile(v, {}, c, {}), c.file);
    assert.equal(baseUrlFile({ 'base-url': 'https://mine.example' }, { 'base-url': 'https://mine.example' }, c, {}), undefined, '--base-url given');
    assert.equal(baseUrlFile({}, {}, c, { EVAL_RUNNER_BASE_URL: 'https://mine.example' }), undefined, 'the file names none: the environment\'s');
    assert.equal(baseUrlFile(v, {}, c, { EVAL_RUNNER_BASE_URL: 'https://evil.example/api' }), undefined, 'the user names that origin too');
    assert.equal(baseUrlFile(v, {}, c, { EVAL_RUNNER_BASE_URL: 'https://mine.example' }), c.file, 'the user names another');
    assert.equal(baseUrlFile(v, {}, undefined, {}), undefined, 'no config file: the command line\'s');
    assert.equal(tokenLine('https://service.example.com/api'), 'EVAL_RUNNER_TOKEN → service.example.com, as the service token');
  });

  it('asks once at a terminal, remembers the yes, asks again when the file or the origin changes; no terminal: refused', async () => {
    const first = file('{"baseUrl": "http://127.0.0.1:9"}');
    await assert.rejects(approve(first, 'http://127.0.0.1:9'), (e: Error) => e instanceof UsageError && /add --base-url with the service you mean, or --allow-env EVAL_RUNNER_TOKEN=http:\/\/127\.0\.0\.1:9 if you trust this file, to the command line\. Nothing was sent\.$/.test(e.message));
    await approve(first, 'http://127.0.0.1:9', yes);
    assert.equal(questions.length, 1);
    assert.match(questions[0]!, /^--config eval\.json sets the service's base URL, where your token goes, to http:\/\/127\.0\.0\.1:9:\n {2}EVAL_RUNNER_TOKEN → http:\/\/127\.0\.0\.1:9, as the service token\nSend your token to http:\/\/127\.0\.0\.1:9\? .*\[y\/N\] $/);
    await approve(first, 'http://127.0.0.1:9/other/path');
    await approve(first, 'http://127.0.0.1:9', yes);
    assert.equal(questions.length, 1, 'remembered: no question, and no terminal needed');
    await assert.rejects(approve(first, 'http://127.0.0.1:10'), /--allow-env EVAL_RUNNER_TOKEN/, 'another origin is another approval');
    await assert.rejects(approve(file('{"baseUrl": "http://127.0.0.1:9", "concurrency": 2}'), 'http://127.0.0.1:9'), /Nothing was sent/, 'another content too');
  });

  it('a no is not remembered; --allow-env EVAL_RUNNER_TOKEN allows without a question and remembers nothing', async () => {
    const f = file('{}');
    await assert.rejects(approve(f, 'https://s.example', () => Promise.resolve(false)), /Not allowed: nothing was sent\. Allow it at the question, or add --base-url/);
    await approve(f, 'https://s.example', undefined, ['EVAL_RUNNER_TOKEN']);
    await assert.rejects(approve(f, 'https://s.example'), /Nothing was sent/);
  });

  it("a yes for a file's own variable at an origin is not a yes for the token there, nor the other way round", async () => {
    const f = file('{"baseUrl": "https://s.example"}');
    store.add({ sha256: f.sha256, origin: 'https://s.example', file: f.path, variables: ['MY_KEY'] });
    await assert.rejects(approve(f, 'https://s.example'), /--allow-env EVAL_RUNNER_TOKEN/);
    await approve(f, 'https://s.example', yes);
    assert.ok(store.has(f.sha256, 'https://s.example', ['MY_KEY', 'EVAL_RUNNER_TOKEN']), 'both yeses kept');
    const g = file('{"baseUrl": "https://t.example"}');
    await approve(g, 'https://t.example', yes);
    assert.ok(!store.has(g.sha256, 'https://t.example', ['MY_KEY']));
  });
});
