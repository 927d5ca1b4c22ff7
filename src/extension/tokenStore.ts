import * as vscode from 'vscode';

const PREFIX = 'evalRunner.token:';
const OPENAI_KEY = 'evalRunner.openaiKey';

/** Personal access tokens in SecretStorage, one per service origin. Changes reach every window. */
export class TokenStore implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<string>();
  readonly onDidChange = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.subscription = secrets.onDidChange((e) => {
      if (e.key.startsWith(PREFIX)) this.emitter.fire(e.key.slice(PREFIX.length));
    });
  }

  get(origin: string): Thenable<string | undefined> {
    return this.secrets.get(PREFIX + origin);
  }

  set(origin: string, token: string): Thenable<void> {
    return this.secrets.store(PREFIX + origin, token);
  }

  clear(origin: string): Thenable<void> {
    return this.secrets.delete(PREFIX + origin);
  }

  getOpenAiKey(): Thenable<string | undefined> {
    return this.secrets.get(OPENAI_KEY);
  }

  setOpenAiKey(key: string): Thenable<void> {
    return this.secrets.store(OPENAI_KEY, key);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
