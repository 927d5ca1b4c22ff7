import * as vscode from 'vscode';
import type { EvaluationKind } from '../../api/evaluationKinds';
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

/** Where the sandbox is and what it serves: the running one's, or while it starts again, the one remembered. */
export interface SandboxPlace {
  baseUrl: string;
  evaluations: ReadonlyArray<{ evaluationId: number; kind: EvaluationKind }>;
}

// The port the sandbox last listened on, for every window: the next start prefers it, so a runner still following
// a sandbox run after a reload finds the sandbox where it was.
const LAST_PORT = 'evalRunner.sandbox.lastPort';
// This window's sandbox while it runs (cleared by Stop): a reload or a restart starts it again and shows its
// evaluations at once, before it listens, so restored panels and runs going on find them.
const PLACE = 'evalRunner.sandbox.place';

/** The local sandbox inside the extension host: one at a time, closed with the window, started again with the next. */
export class SandboxController extends Disposable {
  private current: Sandbox | undefined;
  private starting: Promise<Sandbox> | undefined;
  private readonly emitter = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.emitter.event;

  constructor(
    private readonly global: vscode.Memento,
    private readonly workspace: vscode.Memento,
    /** evalRunner.sandbox.port: 0 lets the sandbox take its last port. */
    private readonly chosenPort: () => number,
  ) {
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

  /** Where the sandbox is: running, starting, or left running by this window before a reload. */
  get place(): SandboxPlace | undefined {
    return this.current ?? this.workspace.get<SandboxPlace>(PLACE);
  }

  /** Starts the sandbox this window left running (a reload, a restart); undefined when it left none. */
  resume(): Promise<Sandbox> | undefined {
    return this.workspace.get<SandboxPlace>(PLACE) ? this.start(true) : undefined;
  }

  /** The sandbox's own token, once it listens (started if need be; undefined: it could not start). */
  async token(): Promise<string | undefined> {
    return (await this.start().catch(() => undefined))?.token;
  }

  /** `again`: the sandbox of before a reload, whose robustness prompts were generated already (a runner may submit at once). */
  start(again = false): Promise<Sandbox> {
    if (this.current) return Promise.resolve(this.current);
    this.starting ??= this.listen(again).finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async listen(again: boolean): Promise<Sandbox> {
    const port = this.chosenPort() || this.global.get<number>(LAST_PORT, 0);
    const sandbox = await sandboxModule().startSandbox({ port, anyPortIfTaken: true, generationSeconds: again ? 0 : 5, evaluationSeconds: 1 });
    if (this.isDisposed) {
      await sandbox.close();
      throw new Error('The window closed while the sandbox started.');
    }
    this.current = sandbox;
    // A port taken by another window's sandbox is not remembered over the one preferred.
    if (!port || new URL(sandbox.baseUrl).port === String(port)) await this.global.update(LAST_PORT, Number(new URL(sandbox.baseUrl).port));
    await this.workspace.update(PLACE, { baseUrl: sandbox.baseUrl, evaluations: sandbox.evaluations.map(({ evaluationId, kind }) => ({ evaluationId, kind })) });
    await vscode.commands.executeCommand('setContext', 'evalRunner.sandboxRunning', true);
    this.emitter.fire();
    return sandbox;
  }

  async stop(): Promise<string | undefined> {
    const sandbox = this.current ?? (await this.starting?.catch(() => undefined));
    await this.workspace.update(PLACE, undefined);
    if (!sandbox) {
      this.emitter.fire();
      return undefined;
    }
    this.current = undefined;
    await sandbox.close();
    await vscode.commands.executeCommand('setContext', 'evalRunner.sandboxRunning', false);
    this.emitter.fire();
    return new URL(sandbox.baseUrl).origin;
  }
}
