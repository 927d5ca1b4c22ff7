import assert from 'node:assert/strict';
import { createApiClient } from '../../src/api/client';
import { EvaluationSession, listJournals } from '../../src/core';
import { makeRef } from '../../src/extension/evaluations/evaluationRef';
import { startSandbox } from '../../src/sandbox/server';
import { tempDir } from './helpers/runs';

describe('the sandbox is a place, not a port', () => {
  it('finds the prompts and verdicts of a sandbox on another port, and lists them as the sandbox\'s', async () => {
    const stateDir = tempDir();
    const before = await startSandbox({ port: 0 });
    const refBefore = makeRef(before.baseUrl, 1, 'benchmark', 'Sandbox benchmark 1', 'sandbox');
    try {
      const session = new EvaluationSession(refBefore.key, stateDir);
      assert.equal(await session.fetchPrompts(createApiClient({ baseUrl: before.baseUrl, token: before.token })), 25);
      await session.setVerdict('bench-0002', 'bad', 'wrong');
    } finally {
      await before.close();
    }
    // A reload: the old port is held by someone else, so the sandbox comes back elsewhere.
    const squatter = await startSandbox({ port: Number(new URL(before.baseUrl).port), anyPortIfTaken: true });
    const after = await startSandbox({ port: Number(new URL(before.baseUrl).port), anyPortIfTaken: true });
    try {
      assert.notEqual(after.baseUrl, before.baseUrl);
      const refAfter = makeRef(after.baseUrl, 1, 'benchmark', 'Sandbox benchmark 1', 'sandbox');
      assert.equal(refAfter.id, refBefore.id, 'a panel saved with the id restores');
      assert.equal(refAfter.baseUrl, after.baseUrl, 'a run goes to the sandbox where it listens now');
      const again = new EvaluationSession(refAfter.key, stateDir);
      await again.load();
      assert.equal(again.store.traces.size, 25);
      assert.equal(again.store.get('bench-0002')!.rating, 'bad');
      assert.deepEqual(
        (await listJournals(stateDir)).map((j) => `${j.kind} ${j.evaluationId} at ${j.origin}`),
        ['benchmark 1 at sandbox'],
      );
      // A configured service is its origin: another port is another service.
      assert.notEqual(makeRef(after.baseUrl, 1, 'benchmark', 'x', 'configured').id, makeRef(before.baseUrl, 1, 'benchmark', 'x', 'configured').id);
    } finally {
      await after.close();
      await squatter.close();
    }
  });
});
