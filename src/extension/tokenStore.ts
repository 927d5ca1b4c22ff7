import * as vscode from 'vscode';

const PREFIX = 'evalRunner.token:';
const OPENAI_KEY = 'evalRunner.openaiKey';

/**
 * Personal access tokens in SecretStorage, one per service origin. Nothing caches them: every operation reads
 * the store, so a token set or cleared in another window applies to the next request here.
 */
export class TokenStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

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
}
