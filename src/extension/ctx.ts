import * as vscode from 'vscode';
import { Disposable } from './lifecycle';
import { interpreterChosenByWorkspace, pythonInterpreter } from './targets/pythonFiles';
import { ownCodePlace, refusalText, showRefusal } from './targets/restricted';
import { BUTTON } from './buttons';
import { MIB, createApiClient, parseBaseUrl } from '../api/client';
import type { ApiClient } from '../api/client';
import { kindOf, migrateJournals, sentHeaders, specOf, targetIdentity } from '../core';
import type { SecretSources, TargetIdentity, TargetKind, TargetOptions, TargetSecrets, TargetSpec } from '../core';
import { createLog, errorText } from './log';
import { EvaluationRegistry } from './evaluations/registry';
import type { EvaluationRef } from './evaluations/registry';
import { SandboxController } from './evaluations/sandboxController';
import { onSettingsChanged, readProxy, readSettings } from './settings/settings';
import type { Settings } from './settings/settingsModel';
import { TokenStore } from './access/tokenStore';

/** A target as gathered from the settings and secret storage, not yet built: its runner builds it. */
export interface TargetPlan {
  spec: TargetSpec;
  secrets: TargetSecrets;
  /** Where the user's own code starts, and what a model endpoint's 401 says to do. */
  options: Pick<TargetOptions, 'cwd' | 'authHint'>;
  identity: TargetIdentity;
}

/** Everything the features share, built once by activate(). Disposing it disposes all it owns. */
export class Ctx extends Disposable {
  readonly log = createLog();
  readonly tokens: TokenStore;
  readonly sandbox: SandboxController;
  readonly registry: EvaluationRegistry;
  private settingsCache: Settings | undefined;
  /** What the sidebar has selected (set once the tree view exists): a keybinding acts on it. */
  treeSelection: () => readonly unknown[] = () => [];

  constructor(readonly extension: vscode.ExtensionContext) {
    super();
    this.tokens = new TokenStore(extension.secrets, extension.globalState);
    this.sandbox = new SandboxController(extension.globalState, extension.workspaceState, () => this.settings['sandbox.port']);
    this.registry = new EvaluationRegistry(() => this.settings, this.sandbox, this.moveOldJournals());
    // Disposed newest first: the listeners, then the registry (cancelling runs), the sandbox, the log.
    for (const d of [this.log, this.sandbox, this.registry]) this._register(d);
    this._register(
      onSettingsChanged(() => {
        this.settingsCache = undefined;
        this.registry.refresh();
      }),
    );
    this._register(this.sandbox.onDidChange(() => this.registry.refresh()));
    this.registry.refresh();
    // The sandbox this window left running (a reload): its evaluations are listed already, and it listens again.
    this.sandbox.resume()?.catch((error: unknown) => this.log.error(`The local sandbox could not start again: ${errorText(error)}`));
  }

  /**
   * Journals of versions before 0.2 lived in the editor's own storage; they move to the shared state folder
   * once (merged with the CLI's where both ran an evaluation). Not awaited by activation.
   */
  private async moveOldJournals(): Promise<void> {
    const key = 'evalRunner.journalsMoved';
    if (this.extension.globalState.get<boolean>(key)) return;
    try {
      const moved = await migrateJournals(this.extension.globalStorageUri.fsPath, this.settings.stateDir);
      if (moved) this.log.info(`Moved ${moved} journal(s) from the editor's storage to ${this.settings.stateDir}.`);
      await this.extension.globalState.update(key, true);
    } catch (error) {
      this.log.error(`Could not move the journals of an older version to ${this.settings.stateDir}: ${errorText(error)}`);
    }
  }

  get settings(): Settings {
    this.settingsCache ??= readSettings();
    return this.settingsCache;
  }

  /** An API client for the evaluation's service; asks for the token when none is stored (undefined: the user declined). */
  async clientFor(ref: EvaluationRef): Promise<ApiClient | undefined> {
    const token = await this.tokenFor(ref);
    return token === undefined ? undefined : this.clientWith(this.current(ref), token);
  }

  /**
   * The evaluation as listed now: after a reload the sandbox is listed where it was before it listens, and may then
   * listen on another port (the old one taken); its token and answers must go where it listens, never the old port.
   */
  current(ref: EvaluationRef): EvaluationRef {
    return this.registry.find(ref.id) ?? ref;
  }

  /** The stored token of the evaluation's service; asked for when none is (undefined: no base URL, or the user declined). */
  async tokenFor(ref: EvaluationRef): Promise<string | undefined> {
    if (ref.origin === 'unset' || ref.origin === 'invalid') {
      const choice = await vscode.window.showErrorMessage(
        ref.origin === 'unset' ? vscode.l10n.t('Set the service base URL (evalRunner.baseUrl) first.') : baseUrlProblem(ref.baseUrl),
        BUTTON.openSettings,
      );
      if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'evalRunner.baseUrl');
      return undefined;
    }
    // The sandbox knows its own token: never asked for, never stored.
    if (ref.source === 'sandbox') return this.sandbox.token();
    let token = await this.tokens.get(ref.origin);
    if (!token) {
      token = await askToken(ref.origin);
      if (!token) return undefined;
      await this.tokens.set(ref.origin, token);
    }
    return token;
  }

  /** What a client of this window sends as its user agent. */
  get userAgent(): string {
    return `eval-runner-vscode/${extensionVersion(this.extension.extension)}`;
  }

  clientWith(ref: EvaluationRef, token: string): ApiClient {
    return createApiClient({
      baseUrl: ref.baseUrl,
      token,
      encoding: this.settings.requestEncoding,
      connections: this.settings.concurrency,
      maxListBytes: this.settings.maxListMegabytes * MIB,
      userAgent: this.userAgent,
      proxy: readProxy(),
      onRetry: (e) => this.log.warn(`Retrying in ${e.delayMs} ms (attempt ${e.attempt}): ${e.error.message}`),
      onDebug: (message) => this.log.debug(message),
    });
  }

  /**
   * Asks the user for a secret in a password box (undefined: cancelled). A field so the integration tests can
   * answer it; everything else goes through the real input box.
   */
  askSecret = async (title: string, prompt: string): Promise<string | undefined> =>
    (await vscode.window.showInputBox({ title, prompt, password: true, ignoreFocusOut: true }))?.trim();

  /** A quick pick (undefined: cancelled); a field so the integration tests can answer it. */
  pickItem = <T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Thenable<T | undefined> =>
    vscode.window.showQuickPick(items, options);

  /** Says why the own-code target does not run in Restricted Mode; a field so the integration tests can see it. */
  refuseOwnCode = (message: string): void => showRefusal(message);

  /** Asks where to save a file (undefined: cancelled); a field so the integration tests can answer it. */
  askSaveUri = (options: vscode.SaveDialogOptions): Thenable<vscode.Uri | undefined> => vscode.window.showSaveDialog(options);

  /**
   * What the target is made of, its secrets gathered (asked for where missing): built in the run's runner process,
   * which gets the plan over its socket (or shown to the debugger by Debug Trace). undefined: the manual target, or
   * the user cancelled.
   */
  async targetPlan(): Promise<TargetPlan | undefined> {
    const t = this.settings.target;
    if (t.type === 'manual') return undefined;
    const kind: TargetKind = kindOf(t.type);
    const options: TargetPlan['options'] = {};
    let spec = specOf(t)!;
    let secrets: TargetSecrets = {};
    if (kind.secrets && kind.endpoint) {
      const found = await this.endpointSecrets(kind, t as SecretSources, kind.endpoint(spec));
      if (!found) return undefined;
      secrets = found;
      if (kind.secrets.apiKey) options.authHint = `Set this endpoint's key: Eval Runner: Clear Model Key, then run again to be asked for it.`;
      this.warnOnce(kind.endpoint(spec), kind.warnings?.(spec, secrets) ?? []);
    }
    if (kind.localProcess) {
      // The user's own code: where it starts (the workspace, as the CLI's start in its working folder) and, in
      // Restricted Mode, whether it may. Every run, rerun, runner and Debug Trace comes through here.
      const found = spec.type === 'python' && !spec.python ? await pythonInterpreter(undefined, this.log) : undefined;
      const verdict = ownCodePlace(spec, found ? { path: found, byWorkspace: interpreterChosenByWorkspace() } : undefined, this.extension.globalStorageUri.fsPath);
      if (!verdict.ok) {
        const message = refusalText(verdict);
        this.log.warn(message);
        this.refuseOwnCode(message);
        return undefined;
      }
      spec = verdict.spec;
      if (verdict.cwd) options.cwd = verdict.cwd;
    }
    return { spec, secrets, options, identity: targetIdentity(spec, options.cwd) };
  }

  /**
   * The editor's source of a kind's secrets: its secret storage, per endpoint origin (asked for where missing). The
   * CLI's is the environment (secretsFromEnv). undefined: the user cancelled a question.
   */
  private async endpointSecrets(kind: TargetKind, t: SecretSources, url: string): Promise<TargetSecrets | undefined> {
    const origin = new URL(url).origin;
    const apiKey = kind.secrets?.apiKey ? await this.modelKey(origin) : undefined;
    if (apiKey === null) return undefined;
    const secret = kind.secrets?.headers ? await this.secretHeaders(origin, t.secretHeaders ?? []) : {};
    if (!secret) return undefined;
    // The http target's secret query parameters: kept as its secret headers are, asked for with the origin named.
    const query = await this.secretQuery(origin, (t as { secretQuery?: string[] }).secretQuery ?? []);
    if (!query) return undefined;
    return { ...(apiKey ? { apiKey } : {}), headers: sentHeaders(t.headers, secret), ...(Object.keys(query).length > 0 ? { query } : {}) };
  }

  /** The key stored for this endpoint origin only; asked for when there is none (null: the user cancelled). */
  private async modelKey(origin: string): Promise<string | undefined | null> {
    const stored = await this.tokens.getModelKey(origin);
    if (stored !== undefined || this.tokens.isKeyless(origin)) return stored;
    const entered = await this.askSecret(
      `API key for ${origin}`,
      `The key for ${origin} (kept in secret storage, sent only there). Leave empty if this endpoint needs none.`,
    );
    if (entered === undefined) return null;
    if (entered) await this.tokens.setModelKey(origin, entered);
    else await this.tokens.markKeyless(origin);
    return entered || undefined;
  }

  /** Values of the secret headers for this origin, asked for where missing (undefined: the user cancelled). */
  private async secretHeaders(origin: string, names: readonly string[]): Promise<Record<string, string> | undefined> {
    const out: Record<string, string> = {};
    for (const name of names) {
      let value = await this.tokens.getHeader(origin, name);
      if (!value) {
        value = await this.askSecret(`Header ${name} for ${origin}`, `The value of the ${name} header (kept in secret storage, sent only to ${origin}).`);
        if (!value) return undefined;
        await this.tokens.setHeader(origin, name, value);
      }
      out[name.toLowerCase()] = value;
    }
    return out;
  }

  /** Values of the secret query parameters for this origin, asked for where missing (undefined: the user cancelled). */
  private async secretQuery(origin: string, names: readonly string[]): Promise<Record<string, string> | undefined> {
    const out: Record<string, string> = {};
    for (const name of names) {
      let value = await this.tokens.getQuery(origin, name);
      if (!value) {
        value = await this.askSecret(
          vscode.l10n.t('Query parameter {0} for {1}', name, origin),
          vscode.l10n.t("The value of the URL's {0} parameter (kept in secret storage, sent only to {1}).", name, origin),
        );
        if (!value) return undefined;
        await this.tokens.setQuery(origin, name, value);
      }
      out[name] = value;
    }
    return out;
  }

  /** A kind's warnings, each said once per endpoint in this window (in the log and a notification). */
  private warnOnce(url: string, warnings: readonly string[]): void {
    if (warnings.length === 0 || this.warned.has(url)) return;
    this.warned.add(url);
    for (const warning of warnings) {
      this.log.warn(warning);
      void vscode.window.showWarningMessage(warning);
    }
  }

  private readonly warned = new Set<string>();
}

export async function askToken(origin: string): Promise<string | undefined> {
  const token = await vscode.window.showInputBox({
    title: vscode.l10n.t('Eval Runner: Set Token'),
    prompt: vscode.l10n.t('Personal access token for {0} (kept in VS Code\'s secret storage)', origin),
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (/\s/.test(v.trim()) ? 'A token has no spaces.' : undefined),
  });
  return token?.trim() || undefined;
}

function baseUrlProblem(baseUrl: string): string {
  try {
    parseBaseUrl(baseUrl);
    return `The base URL "${baseUrl}" is not valid.`;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The extension's version, from its package.json. */
export function extensionVersion(extension: vscode.Extension<unknown>): string {
  return String((extension.packageJSON as { version?: unknown }).version);
}
