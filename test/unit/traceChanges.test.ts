import assert from 'node:assert/strict';
import { TraceStore } from '../../src/core/store/traceStore';

describe('trace store: who changed, for views that follow a run', () => {
  it('names each trace a record or a transient state changes; a new list or a fresh run may change all', () => {
    const store = new TraceStore();
    store.apply({ t: 'prompts', at: 1, items: [{ traceId: 'a', content: 'x' }, { traceId: 'b', content: 'y' }] });
    const heard: Array<string | undefined> = [];
    const stop = store.onTraceChanged((t) => heard.push(t?.traceId));
    store.setTransient('a', 'running');
    store.apply({ t: 'answer', id: 'a', a: 'answer', at: 2 });
    store.apply({ t: 'submitted', id: 'a', at: 3 });
    store.apply({ t: 'verdict', id: 'b', at: 4, rating: 'bad' });
    store.apply({ t: 'verdict', id: 'unknown', at: 4, rating: 'bad' });
    store.apply({ t: 'run', at: 5, run: 'r1' });
    assert.deepEqual(heard, ['a', 'a', 'a', 'b']);
    store.apply({ t: 'run', at: 6, run: 'r2', mode: 'fresh' });
    store.apply({ t: 'prompts', at: 7, items: [{ traceId: 'c', content: 'z' }] });
    assert.deepEqual(heard.slice(4), [undefined, undefined]);
    stop();
    store.apply({ t: 'answer', id: 'b', a: 'later', at: 8 });
    assert.equal(heard.length, 6, 'nothing after stopping');
  });
});
