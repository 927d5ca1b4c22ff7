import assert from 'node:assert/strict';
import type { EvaluationSession, RunProgress } from '../../src/core';
import { TraceStore } from '../../src/core/store/traceStore';
import { evaluationDescription } from '../../src/extension/evaluations/treeModel';

/** A store of ten traces, four answered and not submitted, two submitted. */
function storeWithAnswers(): TraceStore {
  const store = new TraceStore();
  store.apply({ t: 'prompts', at: 1, items: Array.from({ length: 10 }, (_, i) => ({ traceId: `t${i}`, content: `prompt ${i}` })) });
  for (let i = 0; i < 6; i++) store.apply({ t: 'answer', at: 2, id: `t${i}`, a: `answer ${i}`, by: 'target' });
  for (let i = 0; i < 2; i++) store.apply({ t: 'submitted', at: 3, id: `t${i}` });
  return store;
}

function sessionOf(store: TraceStore, running: boolean, lastProgress?: RunProgress): EvaluationSession {
  return { store, hasPrompts: true, isRunning: running, lastProgress } as unknown as EvaluationSession;
}

/** The evaluation's line in the tree says what its answers wait for, and during a run what the toast says. */
describe('the tree\'s words', () => {
  it('says "waiting to submit" for answers not submitted when review is off, "to review" when it is on', () => {
    const store = storeWithAnswers();
    assert.equal(store.counts.answered, 4, 'the fixture has four answers waiting');
    assert.equal(evaluationDescription(sessionOf(store, false), false), '2/10 submitted · 4 waiting to submit');
    assert.equal(evaluationDescription(sessionOf(store, false), true), '2/10 submitted · 4 to review');
  });

  it('during a run, counts what the run\'s progress says (the toast\'s and the status bar\'s), not the store read before', () => {
    const store = storeWithAnswers();
    const progress = { phase: 'running', total: 10, counts: { ...store.snapshotCounts(), submitted: 7, answered: 1 } } as unknown as RunProgress;
    assert.equal(evaluationDescription(sessionOf(store, true, progress), false), '7/10 submitted · 1 waiting to submit · running');
    // Once the run has ended, the store (read again at its end) is the truth.
    assert.equal(evaluationDescription(sessionOf(store, false, progress), false), '2/10 submitted · 4 waiting to submit');
  });
});
