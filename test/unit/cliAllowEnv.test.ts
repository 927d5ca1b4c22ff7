import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ApprovalStore, approveFileUses } from '../../src/cli/allowedEnv';
import { allowedByFlag, parseAllowEnv } from '../../src/cli/envAllowance';
import { UsageError } from '../../src/cli/exitCodes';
import type { NamingFile, SecretUse } from '../../src/cli/secretUses';
import { approveTokenOrigin } from '../../src/cli/tokenOrigin';
import { tempDir } from './helpers/runs';

describe('--allow-env NAME=ORIGIN: an allowance names its origin', () => {
  it('reads NAME, NAME=https://host[:port], NAME=http://host:port, and a bare host as https', () => {
    assert.deepEqual(parseAllowEnv(['MY_KEY', 'MY_KEY=https://api.example.com', 'B=http://127.0.0.1:8080/', 'C=api.example.com', 'D=API.Example.com:8443', 'e_1=[::1]:9']), [
      { variable: 'MY_KEY' },
      { variable: 'MY_KEY', origin: 'https://api.example.com' },
      { variable: 'B', origin: 'http://127.0.0.1:8080' },
      { variable: 'C', origin: 'https://api.example.com' },
      { variable: 'D', origin: 'https://api.example.com:8443' },
      { variable: 'e_1', origin: 'https://[::1]:9' },
    ]);
  });

  it('refuses a bad form with words saying the one to use, never quoting a value that is not a name', () => {
    const refused = (value: string, words: RegExp) =>
      assert.throws(() => parseAllowEnv([value]), (e: Error) => e instanceof UsageError && words.test(e.message) && /give NAME or NAME=ORIGIN, e\.g\. --allow-env MY_KEY=https:\/\/api\.example\.com/.test(e.message), value);
    refused('MY_KEY=', /^--allow-env MY_KEY=: the origin is missing/);
    refused('=https://api.example.com', /^--allow-env: one value does not start with a variable's name/);
    refused('MY-KEY', /variable's name/);
    refused('1KEY=api.example.com', /variable's name/);
    refused('MY_KEY=ftp://files.example.com', /^--allow-env MY_KEY: the origin is not an http:\/\/ or https:\/\/ address/);
    refused('MY_KEY=https://api.example.com/v1', /^--allow-env MY_KEY: the origin is a scheme, a host and a port only, without a user, path or query/);
    refused('MY_KEY=https://ann@api.example.com', /without a user, path or query/);
    refused('MY_KEY=api.example.com?x=1', /without a user, path or query/);
    assert.throws(() => parseAllowEnv(['sk-secret-value-1']), (e: Error) => !e.message.includes('sk-secret-value-1'));
  });

  it('NAME allows any origin; NAME=ORIGIN that origin only, refusing another with words naming both', () => {
    const sending = '--config eval.json would send it to';
    assert.equal(allowedByFlag(['MY_KEY'], 'MY_KEY', 'https://evil.example', sending), true);
    assert.equal(allowedByFlag(['MY_KEY=api.example.com'], 'MY_KEY', 'https://api.example.com', sending), true);
    assert.equal(allowedByFlag(['OTHER=api.example.com'], 'MY_KEY', 'https://api.example.com', sending), false, 'not named: asked, or refused');
    assert.equal(allowedByFlag(['MY_KEY=a.example', 'MY_KEY=b.example'], 'MY_KEY', 'https://b.example', sending), true, 'repeatable');
    assert.throws(
      () => allowedByFlag(['MY_KEY=https://api.example.com'], 'MY_KEY', 'http://127.0.0.1:9', sending),
      (e: Error) =>
        e instanceof UsageError &&
        e.message ===
          '--allow-env allows MY_KEY to go to https://api.example.com only, but --config eval.json would send it to http://127.0.0.1:9. Nothing was sent. ' +
            'If http://127.0.0.1:9 is meant, allow it with --allow-env MY_KEY=http://127.0.0.1:9; otherwise check what changed the file.',
    );
  });

  it('a file is allowed by NAME=its origin without a question, and refused at another origin even at a terminal', async () => {
    const store = new ApprovalStore(join(tempDir(), 'allowed-env.json'));
    const file: NamingFile = { flag: '--from-curl', path: 'req.sh', sha256: 'a'.repeat(64) };
    const uses: SecretUse[] = [{ variable: 'MY_KEY', place: { header: 'x-key' }, file }];
    const ask = () => assert.fail('asked');
    await approveFileUses(uses, 'https://api.example.com', { allowEnv: ['MY_KEY=api.example.com'], store, ask });
    await assert.rejects(approveFileUses(uses, 'https://evil.example', { allowEnv: ['MY_KEY=api.example.com'], store, ask }), /but --from-curl req\.sh would send it to https:\/\/evil\.example\. Nothing was sent/);
  });

  it('EVAL_RUNNER_TOKEN=ORIGIN lets a config file\'s baseUrl be that service only, whatever the case', async () => {
    const store = new ApprovalStore(join(tempDir(), 'allowed-env.json'));
    const file: NamingFile = { flag: '--config', path: 'eval.json', sha256: 'b'.repeat(64) };
    await approveTokenOrigin('https://evals.example.com/api', file, { allowEnv: ['eval_runner_token=evals.example.com'], store });
    await assert.rejects(
      approveTokenOrigin('https://evil.example/api', file, { allowEnv: ['EVAL_RUNNER_TOKEN=evals.example.com'], store }),
      /--allow-env allows EVAL_RUNNER_TOKEN to go to https:\/\/evals\.example\.com only, but --config eval\.json sets the service's base URL to https:\/\/evil\.example\./,
    );
  });
});
