import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import { listJournals } from '../../src/core/journal/stateDir';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

const COMMANDS = ['run', 'prompts', 'submit', 'status', 'export', 'report', 'sandbox', 'demo'];

describe('CLI mistakes get words, on stderr, with a next step', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let stateDir: string;
  let env: Record<string, string>;
  const svc = (baseUrl = sandbox.baseUrl, id = '1') => ['--base-url', baseUrl, '--evaluation', id, '--kind', 'benchmark', '--state-dir', stateDir];
  const runEcho = async () => assert.equal((await cli(['run', ...svc(), '--target', 'echo'], env)).code, 0);

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 6, robustnessTraces: 4, evaluationSeconds: 0, generationSeconds: 0 });
    stateDir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
  });
  afterEach(() => sandbox.close());

  it('ends quietly (exit 0, nothing on stderr) when the reader closes the pipe early, as `| head -1` does', async () => {
    await runEcho();
    // The read side is closed before the CLI has started, so its first write meets a closed pipe (EPIPE).
    const closeEarly = (child: { stdout: NodeJS.ReadableStream | null }) => (child.stdout as unknown as { destroy(): void }).destroy();
    for (const args of [['status', ...svc()], ['export', ...svc(), '--format', 'csv'], ['help']]) {
      const r = await cli(args, env, closeEarly);
      assert.equal(r.stderr, '', args[0]);
      assert.equal(r.code, 0, args[0]);
    }
  });

  it('status, export and report of an evaluation with no journal exit 2, write nothing and name the journals there', async () => {
    await runEcho();
    const wrong = 'http://127.0.0.1:1';
    const there = `Journals there: benchmark 1 at ${sandbox.baseUrl}\\. Check --base-url, --evaluation and --kind\\.`;
    const out = join(stateDir, 'out');
    const cases: Array<[string[], string]> = [
      [['status', ...svc(wrong)], wrong],
      [['status', ...svc(wrong), '--json'], wrong],
      [['export', ...svc(sandbox.baseUrl, '7'), '--format', 'csv'], sandbox.baseUrl],
      [['export', ...svc(wrong), '--format', 'jsonl', '--out', out], wrong],
      [['report', ...svc(wrong), '--out', out], wrong],
    ];
    for (const [args, origin] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
      const id = args.includes('7') ? 7 : 1;
      assert.match(r.stderr, new RegExp(`No journal for benchmark evaluation ${id} at ${origin.replace(/\./g, '\\.')} in ${stateDir}\\. ${there}`));
    }
    assert.ok(!existsSync(out), 'no empty report or export was written');
    // A run for a mistyped id is refused by the service and leaves an empty journal: still no journal to read.
    const refused = await cli(['run', ...svc(sandbox.baseUrl, '99'), '--target', 'echo'], env);
    assert.equal(refused.code, 2, refused.stderr);
    for (const args of [['status', ...svc(sandbox.baseUrl, '99')], ['export', ...svc(sandbox.baseUrl, '99'), '--format', 'csv']]) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, new RegExp(`No journal for benchmark evaluation 99 .*${there}`));
    }
    const empty = await cli(['report', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', tempDir(), '--out', out], env);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /No journal is there at all: check --state-dir, or start with "eval-runner run"\./);
  });

  it('no token: exit 2, naming the sandbox\'s token only for a service on this machine', async () => {
    const away = await cli(['run', '--base-url', 'https://evals.example.com', '--evaluation', '1', '--kind', 'benchmark', '--target', 'echo', '--state-dir', stateDir]);
    assert.equal(away.code, 2);
    assert.match(away.stderr, /Set EVAL_RUNNER_TOKEN to your personal access token for that service\./);
    assert.doesNotMatch(away.stderr, /sandbox/);
    const local = await cli(['submit', ...svc(), '--trace', 't', '--answer', 'a']);
    assert.equal(local.code, 2);
    assert.match(local.stderr, /\(for the local sandbox: sandbox-token\)/);
  });

  it('status after an answer submitted by hand, before any list, gives no total it does not know', async () => {
    const dir = tempDir();
    const where = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', dir];
    assert.equal((await cli(['submit', ...where, '--trace', 'bench-0000', '--answer', 'hi'], env)).code, 0);
    const r = await cli(['status', ...where]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /benchmark evaluation 1: 1 submitted \(the prompt list is not journaled yet, so the total is unknown: "run" lists it\)/);
    assert.doesNotMatch(r.stdout, /1\/1 submitted/);
    assert.equal((JSON.parse((await cli(['status', ...where, '--json'])).stdout) as { listed: boolean }).listed, false);
  });

  it('an --out that cannot be written is said in words, exit 2, for export and report', async () => {
    await runEcho();
    const cases: Array<[string[], RegExp]> = [
      [['export', ...svc(), '--format', 'csv', '--out', join(stateDir, 'no', 'such', 'x.csv')], /Cannot write .*x\.csv: its folder does not exist\. Check --out\./],
      [['report', ...svc(), '--out', stateDir], /Cannot write .*: it is a folder; give a file name\. Check --out\./],
    ];
    for (const [args, words] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, words);
      assert.doesNotMatch(r.stderr, /ENOENT|EISDIR/);
    }
  });

  it('lists a state folder\'s journals with their origin, read from a run record when the folder name cannot say it', async () => {
    const v6 = journalPath(stateDir, { origin: 'http://[::1]:8080', kind: 'robustness', evaluationId: 3 });
    mkdirSync(dirname(v6));
    writeFileSync(v6, `${JSON.stringify({ t: 'list', at: 1, total: 2 })}\n${JSON.stringify({ t: 'run', at: 2, origin: 'http://[::1]:8080' })}\n`);
    writeFileSync(join(dirname(v6), 'notes.txt'), 'not a journal');
    const forged = join(stateDir, 'example.com-0badcafe');
    mkdirSync(forged);
    writeFileSync(join(forged, 'benchmark-2.jsonl'), `${JSON.stringify({ t: 'run', at: 1, origin: 'https://example.com' })}\n`);
    await runEcho();
    assert.deepEqual(
      (await listJournals(stateDir)).map((j) => [j.kind, j.evaluationId, j.origin]),
      [
        ['benchmark', 2, 'example.com-0badcafe'],
        ['benchmark', 1, sandbox.baseUrl],
        ['robustness', 3, 'http://[::1]:8080'],
      ],
      'an origin that does not hash to its folder is not believed: the folder is named instead',
    );
  });

  it('says a rejected token once, on stderr, in the command line\'s words', async () => {
    const cases = [['prompts', ...svc().slice(0, 6)], ['submit', ...svc(), '--trace', 'bench-0000', '--answer', 'x']];
    for (const args of cases) {
      const r = await cli(args, { EVAL_RUNNER_TOKEN: 'wrong-token' });
      assert.equal(r.code, 3, args[0]);
      assert.equal(r.stdout, '', args[0]);
      assert.match(r.stderr, /rejected the personal access token/);
      assert.equal(r.stderr.match(/Set (EVAL_RUNNER_TOKEN|a valid personal access token)/g)?.length, 1, r.stderr);
      assert.match(r.stderr, /Set EVAL_RUNNER_TOKEN to a valid personal access token and try again\.\n$/);
      assert.ok(!r.stderr.includes('wrong-token'), 'the token is never in a message');
    }
  });

  it('says once, on stderr, why a run could not start (a Python import that fails)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'model.py'), 'import module_that_is_not_there\ndef answer(prompt):\n    return prompt\n');
    const r = await cli(['run', ...svc(), '--target', 'python', '--python-file', join(dir, 'model.py')], env);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.match(/cannot start: ModuleNotFoundError/g)?.length, 1, r.stderr);
  });

  it('names only the journals there are: not an empty one a refused run left, nor a shard folder never run', async () => {
    await runEcho();
    const wrongKind = await cli(['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'robustness', '--state-dir', stateDir, '--target', 'echo'], env);
    assert.equal(wrongKind.code, 2);
    assert.deepEqual((await listJournals(stateDir)).map((j) => `${j.kind} ${j.evaluationId}`), ['benchmark 1']);
    const never = tempDir();
    const status = await cli(['status', ...svc(), '--state-dir', never, '--json'], env);
    const journals = (JSON.parse(status.stdout) as { journals: string[] }).journals;
    assert.equal(journals.length, 1, `${journals.join(', ')}`);
  });

  it('help COMMAND prints the command\'s own help, as COMMAND --help does', async () => {
    for (const command of COMMANDS) {
      const own = await cli([command, '--help']);
      const help = await cli(['help', command]);
      assert.equal(help.code, 0, command);
      assert.equal(help.stdout, own.stdout, command);
    }
    const unknown = await cli(['help', 'frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
  });

  it('says what --batch goes with: the openai target, not streamed; --batch-fallback with --batch', async () => {
    const openai = ['--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'm'];
    const cases: Array<[string[], RegExp]> = [
      [['--target', 'echo', '--batch'], /--batch and --batch-fallback go with --target openai/],
      [[...openai, '--batch', '--stream'], /A batch is not streamed/],
      [[...openai, '--batch-fallback', 'live'], /batchFallback \(--batch-fallback\) is batch or live, and goes with batch \(--batch\)/],
      [[...openai, '--batch', '--batch-fallback', 'later'], /--batch-fallback/],
    ];
    for (const [args, words] of cases) {
      const r = await cli(['run', ...svc(), ...args], env);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, words);
    }
    assert.equal(sandbox.stats.requests.get('POST /v1/files'), undefined, 'nothing was sent');
  });

  it('names the option a mistyped one was meant to be, and only a near one', async () => {
    const typo = await cli(['run', ...svc(), '--target', 'echo', '--concurency', '3'], env);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /Unknown option '--concurency': did you mean --concurrency\?/);
    const far = await cli(['status', ...svc(), '--frobnicate'], env);
    assert.equal(far.code, 2);
    assert.match(far.stderr, /Unknown option '--frobnicate'/);
    assert.doesNotMatch(far.stderr, /did you mean/);
  });

  it('exports to stdout with --out -, and makes no file named "-"', async () => {
    await runEcho();
    const folder = tempDir();
    const r = await cli(['export', ...svc(), '--format', 'jsonl', '--out', '-'], env, undefined, undefined, folder);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 6);
    assert.equal(existsSync(join(folder, '-')), false);
  });

  it('gives a negative number the option\'s own message, not the argument parser\'s', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['run', ...svc(), '--target', 'echo', '--concurrency', '-3'], /--concurrency must be a whole number of at least 1 \(got -3\)\./],
      [['run', ...svc(), '--target', 'echo', '--limit', '-1'], /--limit must be a whole number of at least 1 \(got -1\)\./],
      [['run', ...svc(), '--target', 'echo', '--concurrency', '2000'], /--concurrency must be a whole number of at most 1024 \(got 2000\)\./],
      [['sandbox', '--port', '-1'], /--port must be a whole number of at least 0 \(got -1\)\./],
      [['sandbox', '--fail-rate', '-0.5'], /--fail-rate must be a number between 0 and 1 \(got "-0\.5"\)\./],
    ];
    for (const [args, expected] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stderr, /ambiguous/);
    }
  });

  it('suggests --port 0 in words for a busy port', async () => {
    const r = await cli(['sandbox', '--port', new URL(sandbox.baseUrl).port]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Port \d+ on 127\.0\.0\.1 is already in use .*Use --port 0 to pick a free port/);
    assert.doesNotMatch(r.stderr, /EADDRINUSE|    at /);
  });
});

describe('config files as VS Code users write them (--config)', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let dir: string;
  let env: Record<string, string>;
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 6, robustnessTraces: 4, evaluationSeconds: 0, generationSeconds: 0 });
    dir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
  });
  afterEach(() => sandbox.close());

  it('reads comments and trailing commas, as settings.json allows', async () => {
    const config = write(
      'eval.jsonc',
      `{
  // The sandbox, for now.
  "baseUrl": "${sandbox.baseUrl}",
  /* one evaluation */
  "evaluations": [{ "evaluationId": 1, "kind": "benchmark", },],
  "target": { "type": "command", "command": "tr a-z A-Z", },
  "stateDir": ${JSON.stringify(join(dir, 'state'))},
}
`,
    );
    // The file names the service the user's own EVAL_RUNNER_BASE_URL names: the token's destination is theirs.
    const r = await cli(['run', '--config', config], { ...env, EVAL_RUNNER_BASE_URL: sandbox.baseUrl });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(sandbox.answerOf(1, 'bench-0000'), sandbox.answerOf(1, 'bench-0000')!.toUpperCase());
  });

  it('says where a config file is not JSON: line and column', async () => {
    const config = write('bad.json', `{\n  "baseUrl": "${sandbox.baseUrl}"\n  "concurrency": 2\n}\n`);
    const r = await cli(['status', '--config', config, '--evaluation', '1', '--kind', 'benchmark'], env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--config .*bad\.json is not valid JSON at line 3, column 3: a "," was expected\./);
  });

  it('reads a config\'s relative paths (a python file, the state folder) from the config\'s folder, not the current one', async () => {
    const folder = join(dir, 'project');
    mkdirSync(folder);
    writeFileSync(join(folder, 'model.py'), 'def answer(prompt):\n    return "py " + prompt\n');
    const config = join(folder, 'eval.json');
    writeFileSync(config, JSON.stringify({ baseUrl: sandbox.baseUrl, evaluations: [{ evaluationId: 1, kind: 'benchmark' }], target: { type: 'python', file: 'model.py' }, stateDir: 'state' }));
    const elsewhere = tempDir();
    const r = await cli(['run', '--config', config, '--base-url', sandbox.baseUrl], env, undefined, undefined, elsewhere);
    assert.equal(r.code, 0, r.stderr);
    assert.match(sandbox.answerOf(1, 'bench-0000')!, /^py /);
    assert.equal((await listJournals(join(folder, 'state'))).length, 1, 'the journal is in the config\'s folder');
    assert.ok(!existsSync(join(elsewhere, 'state')), 'and not in the current folder');
    const status = await cli(['status', '--config', config, '--json'], env, undefined, undefined, elsewhere);
    assert.equal((JSON.parse(status.stdout) as { counts: { submitted: number } }).counts.submitted, 6);
  });

  it('names --config in the help of every command that takes it', async () => {
    for (const command of ['prompts', 'submit', 'status', 'export', 'report']) {
      assert.match((await cli([command, '--help'])).stdout, /--config FILE/, command);
    }
  });
});
