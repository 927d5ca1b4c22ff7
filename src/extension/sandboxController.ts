import * as vscode from 'vscode';
import { Disposable, toDisposable } from './lifecycle';
import { startSandbox } from '../sandbox/server';
import type { Sandbox } from '../sandbox/server';

/** The local sandbox inside the extension host: one at a time, ended with the window. */
export class SandboxController extends Disposable {
  private current: Sandbox | undefined;
  private readonly emitter = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.emitter.event;

  constructor() {
    super();
    this._register(
      toDisposable(() => {
        void this.current?.close();
        this.current = undefined;
      }),
    );
  }

  get sandbox(): Sandbox | undefined {
    return this.current;
  }

  async start(): Promise<Sandbox> {
    if (this.current) return this.current;
    this.current = await startSandbox({ port: 0, generationSeconds: 5, evaluationSeconds: 1 });
    await vscode.commands.executeCommand('setContext', 'evalRunner.sandboxRunning', true);
    this.emitter.fire();
    return this.current;
  }

  async stop(): Promise<string | undefined> {
    const sandbox = this.current;
    if (!sandbox) return undefined;
    this.current = undefined;
    await sandbox.close();
    await vscode.commands.executeCommand('setContext', 'evalRunner.sandboxRunning', false);
    this.emitter.fire();
    return new URL(sandbox.baseUrl).origin;
  }
}
