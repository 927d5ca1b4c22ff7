import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { demoNextSteps } from '../../src/cli/demoCommand';
import { cli } from './helpers/cli';

describe('the demo says where its files are kept and what to try next', function () {
  this.timeout(90_000);

  it('runs the loop, says its journals are removed, removes them, and names the next commands', async () => {
    const r = await cli(['demo']);
    assert.equal(r.code, 0, r.stderr);
    const folder = /journals in (\S+) \(a temporary folder, removed when the demo ends\)/.exec(r.stdout)?.[1];
    assert.ok(folder, r.stdout);
    assert.ok(!existsSync(folder), 'the journals are gone, as it says');
    assert.match(r.stdout, /Nothing was kept/);
    assert.match(r.stdout, /node dist\/cli\.js demo --keep/);
    assert.match(r.stdout, /node dist\/cli\.js sandbox .*ready to paste/);
    assert.match((await cli(['demo', '--help'])).stdout, /removed when the demo ends/);
  });

  it('with --keep, gives status and report commands on its own sandbox and journals', () => {
    const text = demoNextSteps('http://127.0.0.1:5555', 'sandbox-token', '/tmp/eval-runner-demo-x', true);
    assert.match(text, /journals in \/tmp\/eval-runner-demo-x stay until you press Ctrl-C/);
    assert.match(text, /\n  node dist\/cli\.js status --base-url http:\/\/127\.0\.0\.1:5555 --evaluation 1 --kind benchmark --state-dir \/tmp\/eval-runner-demo-x\n/);
    assert.match(text, /EVAL_RUNNER_TOKEN=sandbox-token node dist\/cli\.js run .* --target echo --fresh/);
    assert.match(text, /node dist\/cli\.js report .* --out report\.html/);
  });

  it('with --keep, Ctrl-C once its runs are over stops the sandbox and says so (no traces are in flight then)', async () => {
    const r = await cli(['demo', '--keep'], {}, (child) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (out.includes('stay until you press Ctrl-C')) child.kill('SIGINT');
      });
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Stopping the sandbox and removing the demo's journals\./);
    assert.doesNotMatch(r.stderr, /Finishing the traces in flight/);
    const folder = /journals in (\S+) stay until/.exec(r.stdout)?.[1];
    assert.ok(folder && !existsSync(folder), 'the journals are gone');
  });
});
