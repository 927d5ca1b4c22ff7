import type * as vscode from 'vscode';

/**
 * The one base for what owns disposables: `_register` what it creates (listeners, registrations, panels) and
 * `dispose()` releases all of it once, newest first. A registration made after disposal is released at once, so
 * a late callback cannot leak a listener.
 */
export abstract class Disposable implements vscode.Disposable {
  private readonly _toDispose: vscode.Disposable[] = [];
  private _isDisposed = false;

  protected get isDisposed(): boolean {
    return this._isDisposed;
  }

  protected _register<T extends vscode.Disposable>(disposable: T): T {
    if (this._isDisposed) void disposable.dispose();
    else this._toDispose.push(disposable);
    return disposable;
  }

  dispose(): void {
    if (this._isDisposed) return;
    this._isDisposed = true;
    disposeAll(this._toDispose.splice(0).reverse());
  }
}

/** Disposes each one even if another throws; the first error is thrown after all were tried. */
export function disposeAll(disposables: Iterable<vscode.Disposable>): void {
  let first: Error | undefined;
  for (const d of disposables) {
    try {
      void d.dispose();
    } catch (error) {
      first ??= error instanceof Error ? error : new Error(String(error));
    }
  }
  if (first) throw first;
}

/** A disposable that runs fn once. */
export function toDisposable(fn: () => void): vscode.Disposable {
  let done = false;
  return {
    dispose: () => {
      if (done) return;
      done = true;
      fn();
    },
  };
}
