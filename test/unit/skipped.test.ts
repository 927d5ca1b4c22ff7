import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createApiClient } from '../../src/api/client';
import { EvaluationSession } from '../../src/core/session/session';
import { skippedAnswerText } from '../../src/core/run/skipped';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

describe('skipped traces, explicitly handled', () => {
  it('fills the not-answered text from its template', () => {
    assert.equal(skippedAnswerText('Not answered: {reason}', 'out of scope', 't1'), 'Not answered: out of scope');
    assert.equal(skippedAnswerText('', undefined, 't1'), 'Not answered: skipped');
    assert.equal(skippedAnswerText('{traceId} left out ({reason})', 'policy', 'bench-7'), 'bench-7 left out (policy)');
  });

  it('a run says the service cannot complete while traces are skipped; --submit-skipped submits them as not answered, counted apart', async function () {
    this.timeout(30_000);
    const sandbox = await startSandbox({ port: 0, generationSeconds: 0, evaluationSeconds: 0 });
    try {
      const state = join(tempDir(), 'state');
      const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token });
      const session = new EvaluationSession({ origin: client.origin, kind: 'benchmark', evaluationId: 1 }, state);
      await session.fetchPrompts(client);
      await client.close();
      await session.skip('bench-0003', 'out of scope');
      await session.skip('bench-0005', 'needs a human');
      const base = ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', state, '--target', 'echo'];
      const env = { EVAL_RUNNER_TOKEN: sandbox.token };
      const first = await cli(base, env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /2 trace\(s\) are skipped: the service cannot complete the evaluation while they are unanswered/);
      assert.equal(sandbox.answerOf(1, 'bench-0003'), undefined);
      assert.notEqual(sandbox.summary(1)!.state, 'Completed');

      const second = await cli([...base, '--submit-skipped'], env);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /--submit-skipped: 2 skipped trace\(s\) submitted as not answered\./);
      assert.doesNotMatch(second.stdout, /are skipped: the service cannot complete/);
      assert.equal(sandbox.answerOf(1, 'bench-0003'), 'Not answered: out of scope');
      assert.equal(sandbox.answerOf(1, 'bench-0005'), 'Not answered: needs a human');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(sandbox.summary(1)!.state, 'Completed');

      const status = await cli(['status', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', state, '--json'], env);
      const parsed = JSON.parse(status.stdout) as { notAnswered: number; counts: { submitted: number; skipped: number } };
      assert.equal(parsed.notAnswered, 2);
      assert.equal(parsed.counts.submitted, 25);
      assert.equal(parsed.counts.skipped, 0);
      const exported = await cli(['export', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', state, '--format', 'jsonl'], env);
      const rows = exported.stdout.trim().split('\n').map((l) => JSON.parse(l) as { traceId: string; notAnswered: boolean });
      assert.deepEqual(rows.filter((r) => r.notAnswered).map((r) => r.traceId).sort(), ['bench-0003', 'bench-0005']);
    } finally {
      await sandbox.close();
    }
  });
});
