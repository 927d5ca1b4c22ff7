import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configToArgs, parseRunConfig, runCommandLine, shellQuote } from '../../src/core/options/runConfig';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

const ROOT = join(__dirname, '..', '..', '..');

describe('the CLI from CI: --version and --config FILE', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let dir: string;
  let env: Record<string, string>;
  const write = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
    return path;
  };

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 6, robustnessTraces: 4, evaluationSeconds: 0, generationSeconds: 0 });
    dir = tempDir();
    env = { EVAL_RUNNER_TOKEN: sandbox.token };
  });
  afterEach(() => sandbox.close());

  it('prints its version with --version and -v (the package version)', async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-v']) {
      const r = await cli([flag]);
      assert.equal(r.code, 0);
      assert.equal(r.stdout, `eval-runner ${version} (Node.js ${process.versions.node})\n`);
    }
  });

  it('runs from a settings-shaped config file; flags given override it', async () => {
    const config = write('eval.json', {
      baseUrl: sandbox.baseUrl,
      evaluations: [{ evaluationId: 1, kind: 'benchmark', label: 'Nightly' }],
      target: { type: 'command', command: 'tr a-z A-Z' },
      concurrency: 2,
      stateDir: join(dir, 'state'),
      // Every run setting is a config key; an editor-only one (keepRunsAlive) is taken and ignored.
      servicePatience: 60,
      targetRetries: 1,
      keepRunsAlive: false,
    });
    // The file names the service: CI allows the token to go there (at a terminal, the CLI asks once).
    const r = await cli(['run', '--config', config, '--allow-env', 'EVAL_RUNNER_TOKEN'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(sandbox.answerOf(1, 'bench-0000'), sandbox.answerOf(1, 'bench-0000')!.toUpperCase());
    const status = JSON.parse((await cli(['status', '--config', config, '--json'], env)).stdout) as { counts: { submitted: number }; runs: Array<{ target: string }> };
    assert.equal(status.counts.submitted, 6, 'status reads the same journal through the config');
    // A flag overrides the config's target (and the config's evaluation list picks the kind of --evaluation 2).
    const config2 = write('two.json', {
      baseUrl: sandbox.baseUrl,
      evaluations: [{ evaluationId: 1, kind: 'benchmark' }, { evaluationId: 2, kind: 'robustness' }],
      target: { type: 'command', command: 'tr a-z A-Z' },
      stateDir: join(dir, 'state'),
    });
    const ambiguous = await cli(['run', '--config', config2], env);
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.stderr, /The config lists 2 evaluations \(benchmark 1, robustness 2\): choose one with --evaluation ID\./);
    const r2 = await cli(['run', '--config', config2, '--evaluation', '2', '--target', 'echo', '--base-url', sandbox.baseUrl], env);
    assert.equal(r2.code, 0, r2.stderr);
    const p = (await cli(['prompts', '--config', config2, '--evaluation', '2', '--json', '--allow-env', 'EVAL_RUNNER_TOKEN'], env)).stdout;
    const first = (JSON.parse(p) as Array<{ traceId: string; content: string }>)[0]!;
    assert.equal(sandbox.answerOf(2, first.traceId), first.content, 'echo, as the flag said');
  });

  it('refuses secrets, unknown keys and editor-only targets in the config, quoting no value', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ baseUrl: sandbox.baseUrl, token: 'tok-123456' }, /holds "token": secrets never go in the config file/],
      [{ target: { type: 'openai', baseUrl: 'https://x/v1', model: 'm', apiKey: 'sk-live-abcdef' } }, /holds "target\.apiKey"/],
      [{ baseUrl: sandbox.baseUrl, concurency: 4 }, /\(top level\): unknown setting "concurency"/],
      [{ target: { type: 'vscode-lm' } }, /target\.type: must be echo, openai, http, command, python or worker/],
    ];
    for (const [value, expected] of cases) {
      const r = await cli(['run', '--config', write('bad.json', value), '--evaluation', '1', '--kind', 'benchmark'], env);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, expected);
      assert.ok(!/tok-123456|sk-live-abcdef/.test(r.stderr), 'no secret value is quoted back');
    }
    const missing = await cli(['run', '--config', join(dir, 'nope.json')], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Cannot read --config .*nope\.json: ENOENT/);
  });

  it('turns an openai target with batch and batchFallback into --batch and --batch-fallback', () => {
    const target = { type: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', batch: true, batchFallback: 'live' };
    const config = parseRunConfig({ baseUrl: 'https://evals.example.com', evaluations: [{ evaluationId: 3, kind: 'benchmark' }], target }, 'test');
    const args = configToArgs(config, [], 'run');
    assert.ok(args.includes('--batch'));
    assert.deepEqual(args.slice(args.indexOf('--batch-fallback'), args.indexOf('--batch-fallback') + 2), ['--batch-fallback', 'live']);
  });

  it('turns an HTTP target with secret headers into --header-env, the variable named or derived', () => {
    const config = parseRunConfig(
      {
        baseUrl: 'https://evals.example.com',
        evaluations: [{ evaluationId: 3, kind: 'benchmark' }],
        target: { type: 'http', url: 'https://m.example/v1', bodyTemplate: '{"q": "{{prompt}}"}', answerPath: 'a', secretHeaders: ['X-Api-Key', 'X-Org'], headerEnv: { 'X-Org': 'ORG_SECRET' } },
      },
      'test',
    );
    const args = configToArgs(config, [], 'run');
    assert.deepEqual(args.slice(args.indexOf('--header-env')), ['--header-env', 'X-Api-Key=X_API_KEY', '--header-env', 'X-Org=ORG_SECRET']);
    assert.equal(shellQuote(`it's {"a": 1}`), `'it'\\''s {"a": 1}'`);
    assert.match(runCommandLine(config), /^eval-runner run --base-url https:\/\/evals\.example\.com --evaluation 3 --kind benchmark --target http .* --body-template '\{"q": "\{\{prompt\}\}"\}'/);
  });
});
