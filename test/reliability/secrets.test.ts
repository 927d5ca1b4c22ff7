import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import type { CliResult } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';
import { credentialEchoes, filesUnder } from '../unit/helpers/secrets';

const TOKEN = 'pat-7Qz-SECRET-TOKEN-e4b1c9';
const KEY = 'sk-proj-SECRET-KEY-91b3e0aa';
const FRAGMENTS = [TOKEN, KEY, 'SECRET-TOKEN', 'SECRET-KEY'];

describe('secrets: a recognisable token and target key never leave their header', function () {
  this.timeout(60_000);

  it('appears in no log line, journal, export, error message or submitted answer, even when both peers echo them', async () => {
    // Peers that quote credentials back: the service in a 400 message, the model endpoint in its 401s.
    const peers = credentialEchoes(KEY);
    const sandbox = await startSandbox({ port: 0, token: TOKEN, benchmarkTraces: 40, evaluationSeconds: 0, intercept: peers.intercept });
    const stateDir = tempDir();
    const exportFile = join(tempDir(), 'results.jsonl');
    const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    const target = ['--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'echo', '--api-key-env', 'MY_MODEL_KEY'];
    const env = { EVAL_RUNNER_TOKEN: TOKEN, MY_MODEL_KEY: KEY };
    const outputs: CliResult[] = [];
    try {
      outputs.push(await cli(['run', ...svc, ...target, '--json', '--on-target-error', 'submit'], env));
      outputs.push(await cli(['run', ...svc, ...target], env));
      outputs.push(await cli(['status', ...svc], env));
      outputs.push(await cli(['export', ...svc, '--format', 'jsonl', '--out', exportFile], env));
      outputs.push(await cli(['export', ...svc, '--format', 'csv'], env));
      // --fresh: with every trace submitted and the list journaled, a plain run would not ask the service anything.
      outputs.push(await cli(['run', ...svc, ...target, '--fresh'], { ...env, EVAL_RUNNER_TOKEN: `${TOKEN}-wrong` }));

      assert.deepEqual(peers.echoed, { token: 1, key: 2 }, 'both peers did quote the secrets back');
      assert.equal(outputs[0]!.code, 1, 'the first run has the failed submission');
      assert.equal(outputs[1]!.code, 0, `the rerun submits it: ${outputs[1]!.stderr}`);
      assert.equal(outputs[5]!.code, 3, 'a wrong token is reported');
      const artifacts: Array<[string, string]> = [
        ...outputs.flatMap((o, i): Array<[string, string]> => [[`command ${i} stdout`, o.stdout], [`command ${i} stderr`, o.stderr]]),
        ...filesUnder(stateDir).map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
        [exportFile, readFileSync(exportFile, 'utf8')],
        ['answers the service holds', [...Array(40).keys()].map((i) => sandbox.answerOf(1, `bench-${String(i).padStart(4, '0')}`) ?? '').join('\n')],
      ];
      // The artifacts do carry the peers' words (redacted), so the search looks where a leak would be.
      const all = artifacts.map(([, text]) => text).join('\n');
      assert.match(all, /Rejected request with header Bearer \[redacted\]/);
      assert.match(all, /Incorrect API key provided: \[redacted\]/);
      for (const [where, text] of artifacts) {
        for (const secret of FRAGMENTS) assert.ok(!text.includes(secret), `${secret} found in ${where}`);
      }
    } finally {
      await sandbox.close();
    }
  });
});
