import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import type { CliResult } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';
import { filesUnder } from '../unit/helpers/secrets';
import { json, scriptedServer } from '../unit/helpers/servers';

const KEY = 'AIzaQUERY-SECRET-5c2e91';
const FRAGMENTS = [KEY, 'QUERY-SECRET', encodeURIComponent(KEY)];

describe("secrets: a key in the URL's query (?key=…) goes to its endpoint and nowhere else", function () {
  this.timeout(60_000);

  it('reaches the listener from $MY_QUERY_KEY, and is in no journal, index, export, report or output, even when echoed back', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 8, generationSeconds: 0, evaluationSeconds: 0 });
    // A Gemini-like endpoint that quotes the URL it was asked, key and all, in its first answer (a 400: that trace fails).
    const model = await scriptedServer((req, res, seen, index) => {
      if (index === 0) return json(res, 400, { error: { message: `bad request to ${req.url}` } });
      const body = JSON.parse(seen.body) as { prompt: string };
      json(res, 200, { answer: `answer to: ${body.prompt}` });
    });
    const stateDir = join(tempDir(), 'state');
    const out = tempDir();
    const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    const target = ['--target', 'http', '--http-url', `${model.url}/v1/generate?alt=json`, '--answer-path', 'answer'];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token, MY_QUERY_KEY: KEY };
    // The same target from a config file: its name and variable there, its value in the environment.
    const config = join(out, 'eval-runner.config.json');
    writeFileSync(config, JSON.stringify({ target: { type: 'http', url: `${model.url}/v1/generate?alt=json`, answerPath: 'answer', secretQuery: ['key'], queryEnv: { key: 'MY_QUERY_KEY' } } }));
    const outputs: CliResult[] = [];
    try {
      outputs.push(await cli(['run', ...svc, ...target, '--query-env', 'key=MY_QUERY_KEY', '--json'], env));
      assert.equal(outputs[0]!.code, 1, `the trace that met the 400 failed: ${outputs[0]!.stderr}`);
      outputs.push(await cli(['run', ...svc, '--config', config, '--allow-env', 'MY_QUERY_KEY', '--fresh'], env));
      assert.equal(outputs[1]!.code, 0, outputs[1]!.stderr);
      for (const args of [['status'], ['export', '--format', 'csv'], ['export', '--format', 'jsonl'], ['report', '--out', join(out, 'report.html')]]) {
        const result = await cli([...args, ...svc], env);
        assert.equal(result.code, 0, `${args[0]}: ${result.stderr}`);
        outputs.push(result);
      }

      const prompts = seedPrompts('benchmark', 8);
      assert.equal(model.seen.length, 2 * prompts.length, 'every prompt in each run');
      for (const seen of model.seen) assert.equal(seen.path, `/v1/generate?alt=json&key=${KEY}`, 'the listener receives the key, in the query');
      for (const p of prompts) assert.equal(sandbox.answerOf(1, p.traceId), `answer to: ${p.content}`);
      assert.match(outputs[2]!.stdout, /http: POST http:\/\/127\.0\.0\.1:\d+\/v1\/generate\?alt=…&key=…/, 'status names the parameter, not its value');

      const artifacts: Array<[string, string]> = [
        ...outputs.flatMap((o, i): Array<[string, string]> => [[`command ${i} stdout`, o.stdout], [`command ${i} stderr`, o.stderr]]),
        ...filesUnder(stateDir).map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
        ...filesUnder(out).map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
      ];
      assert.ok(artifacts.some(([where]) => where.endsWith('report.html')), 'the report was written');
      assert.match(artifacts.map(([, text]) => text).join('\n'), /bad request to \/v1\/generate\?alt=\[redacted\]&key=\[redacted\]/, "the endpoint's echo was kept, redacted");
      for (const [where, text] of artifacts) {
        for (const secret of FRAGMENTS) assert.ok(!text.includes(secret), `${secret} found in ${where}`);
      }
    } finally {
      await model.close();
      await sandbox.close();
    }
  });
});
