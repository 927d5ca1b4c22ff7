import * as vscode from 'vscode';

const PREFIX = 'evalRunner.token:';
const MODEL_KEY_PREFIX = 'evalRunner.modelKey:';
const HEADER_PREFIX = 'evalRunner.header:';
const QUERY_PREFIX = 'evalRunner.query:';
// One key for every endpoint, as versions before 0.2 kept it: never read, deleted when first seen.
const LEGACY_OPENAI_KEY = 'evalRunner.openaiKey';
// Origins with a model key stored, so Clear Model Key can offer them (SecretStorage cannot list its keys).
const KEYED_ORIGINS = 'evalRunner.modelKeyOrigins';
// Endpoint origins the user said need no key (a local model server): not asked again until Clear Model Key.
const KEYLESS_ORIGINS = 'evalRunner.keylessOrigins';

/**
 * Secrets in SecretStorage, each bound to the origin it was given for: personal access tokens per service
 * origin, model keys per endpoint origin, secret header and query parameter values per endpoint origin and name. A secret
 * is only ever looked up under the origin a request is about to go to, so it cannot follow a setting that
 * now points elsewhere. Nothing caches them: a secret set or cleared in another window applies next request.
 */
export class TokenStore {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly state: vscode.Memento,
  ) {}

  /** Told when the token of `origin` is set or cleared (in this window or another). */
  onDidChangeToken(origin: string, listener: () => void): { dispose(): void } {
    return this.secrets.onDidChange((e) => {
      if (e.key === PREFIX + origin) listener();
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

  async getModelKey(origin: string): Promise<string | undefined> {
    void this.dropLegacyKey();
    return this.secrets.get(MODEL_KEY_PREFIX + origin);
  }

  async setModelKey(origin: string, key: string): Promise<void> {
    await this.secrets.store(MODEL_KEY_PREFIX + origin, key);
    await this.state.update(KEYED_ORIGINS, [...new Set([...this.list(KEYED_ORIGINS), origin])]);
  }

  isKeyless(origin: string): boolean {
    return this.list(KEYLESS_ORIGINS).includes(origin);
  }

  async markKeyless(origin: string): Promise<void> {
    await this.state.update(KEYLESS_ORIGINS, [...new Set([...this.list(KEYLESS_ORIGINS), origin])]);
  }

  async clearModelKey(origin: string): Promise<void> {
    await this.secrets.delete(MODEL_KEY_PREFIX + origin);
    await this.state.update(KEYED_ORIGINS, this.list(KEYED_ORIGINS).filter((o) => o !== origin));
    await this.state.update(KEYLESS_ORIGINS, this.list(KEYLESS_ORIGINS).filter((o) => o !== origin));
    for (const name of this.secretHeaderNames(origin)) await this.secrets.delete(headerKey(origin, name));
    await this.state.update(`${KEYED_ORIGINS}:headers:${origin}`, undefined);
    for (const name of this.list(`${KEYED_ORIGINS}:query:${origin}`)) await this.secrets.delete(queryKey(origin, name));
    await this.state.update(`${KEYED_ORIGINS}:query:${origin}`, undefined);
  }

  /** Endpoint origins that have a model key, secret headers or query parameters stored, or are marked keyless. */
  knownOrigins(): string[] {
    return [...new Set([...this.list(KEYED_ORIGINS), ...this.list(KEYLESS_ORIGINS)])];
  }

  getHeader(origin: string, name: string): Thenable<string | undefined> {
    return this.secrets.get(headerKey(origin, name));
  }

  async setHeader(origin: string, name: string, value: string): Promise<void> {
    await this.secrets.store(headerKey(origin, name), value);
    const headers = `${KEYED_ORIGINS}:headers:${origin}`;
    await this.state.update(headers, [...new Set([...this.secretHeaderNames(origin), name.toLowerCase()])]);
    await this.state.update(KEYED_ORIGINS, [...new Set([...this.list(KEYED_ORIGINS), origin])]);
  }

  /** A secret URL query parameter's value (its name as written: query names are case-sensitive). */
  getQuery(origin: string, name: string): Thenable<string | undefined> {
    return this.secrets.get(queryKey(origin, name));
  }

  async setQuery(origin: string, name: string, value: string): Promise<void> {
    await this.secrets.store(queryKey(origin, name), value);
    const names = `${KEYED_ORIGINS}:query:${origin}`;
    await this.state.update(names, [...new Set([...this.list(names), name])]);
    await this.state.update(KEYED_ORIGINS, [...new Set([...this.list(KEYED_ORIGINS), origin])]);
  }

  private secretHeaderNames(origin: string): string[] {
    return this.list(`${KEYED_ORIGINS}:headers:${origin}`);
  }

  private list(key: string): string[] {
    const list = this.state.get<unknown>(key);
    return Array.isArray(list) ? list.filter((o): o is string => typeof o === 'string') : [];
  }

  private legacyChecked = false;

  private async dropLegacyKey(): Promise<void> {
    if (this.legacyChecked) return;
    this.legacyChecked = true;
    // Which endpoint the old shared key was for is unknown: sending it anywhere could send it to the wrong one.
    if (await this.secrets.get(LEGACY_OPENAI_KEY)) await this.secrets.delete(LEGACY_OPENAI_KEY);
  }
}

function headerKey(origin: string, name: string): string {
  return `${HEADER_PREFIX}${origin}|${name.toLowerCase()}`;
}

function queryKey(origin: string, name: string): string {
  return `${QUERY_PREFIX}${origin}|${name}`;
}
