import assert from 'node:assert/strict';
import { Disposable, disposeAll, toDisposable } from '../../src/extension/lifecycle';

class Owner extends Disposable {
  register(fn: () => void) {
    return this._register(toDisposable(fn));
  }
}

describe('the one disposable base', () => {
  it('releases what was registered once, newest first', () => {
    const order: string[] = [];
    const owner = new Owner();
    owner.register(() => order.push('listener'));
    owner.register(() => order.push('emitter'));
    owner.dispose();
    owner.dispose();
    assert.deepEqual(order, ['emitter', 'listener']);
  });

  it('releases a registration made after disposal at once, so a late callback leaks nothing', () => {
    const owner = new Owner();
    owner.dispose();
    let released = false;
    owner.register(() => (released = true));
    assert.equal(released, true);
  });

  it('tries every one even when one throws, then throws the first error', () => {
    const done: number[] = [];
    assert.throws(
      () =>
        disposeAll([
          toDisposable(() => done.push(1)),
          toDisposable(() => {
            throw new Error('first');
          }),
          toDisposable(() => done.push(3)),
        ]),
      /first/,
    );
    assert.deepEqual(done, [1, 3]);
  });
});
