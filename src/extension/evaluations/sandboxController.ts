import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../lifecycle';
import type { Sandbox } from '../../sandbox/server';

type SandboxModule = typeof import('../../sandbox/server');

/**
 * The sandbox is loaded when it is first started: in the extension a file of its own (dist/sandbox.js, see
 * scripts/build.mjs), so activation neither reads nor evaluates it.
 */
function sandboxModule(): SandboxModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../sandbox/server') as SandboxModule;
}

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
    this.current = await sandboxModule().startSandbox({ port: 0, generationSeconds: 5, evaluationSeconds: 1 });
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
