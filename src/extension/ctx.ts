import * as vscode from 'vscode';
import { createApiClient } from '../api/client';
import type { ApiClient } from '../api/client';
import { createCommandTarget } from '../core/targets/commandTarget';
import { createEchoTarget } from '../core/targets/echoTarget';
import { createHttpTarget } from '../core/targets/httpTarget';
import { createOpenAiTarget } from '../core/targets/openaiTarget';
import type { Target } from '../core/targets/target';
import { createLmTarget } from './lmTarget';
import { createLog } from './log';
import { EvaluationRegistry } from './registry';
import type { EvaluationRef } from './registry';
import { SandboxController } from './sandboxController';
import { onSettingsChanged, readSettings } from './settings';
import type { Settings } from './settings';
import { TokenStore } from './tokenStore';

/** Everything the features share, built once by activate(). Disposing it disposes all it owns. */
export class Ctx implements vscode.Disposable {
  readonly log = createLog();
  readonly tokens: TokenStore;
  readonly sandbox = new SandboxController();
  readonly registry: EvaluationRegistry;
  private settingsCache: Settings | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly extension: vscode.ExtensionContext) {
    this.tokens = new TokenStore(extension.secrets);
    this.registry = new EvaluationRegistry(extension.globalStorageUri.fsPath, () => this.settings, this.sandbox);
    this.disposables.push(
      this.log,
      this.sandbox,
      this.registry,
      onSettingsChanged(() => {
        this.settingsCache = undefined;
        this.registry.refresh();
      }),
      this.sandbox.onDidChange(() => this.registry.refresh()),
    );
    this.registry.refresh();
  }

  get settings(): Settings {
    this.settingsCache ??= readSettings();
    return this.settingsCache;
  }

  /** An API client for the evaluation's service; asks for the token when none is stored (undefined: the user declined). */
  async clientFor(ref: EvaluationRef): Promise<ApiClient | undefined> {
    if (ref.origin === 'unset' || ref.origin === 'invalid') {
      const choice = await vscode.window.showErrorMessage(
        ref.origin === 'unset' ? 'Set the service base URL (evalRunner.baseUrl) first.' : `The base URL "${ref.baseUrl}" is not a valid URL.`,
        'Open Settings',
      );
      if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'evalRunner.baseUrl');
      return undefined;
    }
    let token = await this.tokens.get(ref.origin);
    if (!token) {
      token = await askToken(ref.origin);
      if (!token) return undefined;
      await this.tokens.set(ref.origin, token);
    }
    return createApiClient({
      baseUrl: ref.baseUrl,
      token,
      encoding: this.settings.requestEncoding,
      connections: this.settings.concurrency,
      userAgent: `eval-runner-vscode/${String(this.extension.extension.packageJSON.version)}`,
      onRetry: (e) => this.log.warn(`Retrying in ${e.delayMs} ms (attempt ${e.attempt}): ${e.error.message}`),
    });
  }

  async createTarget(): Promise<Target | undefined> {
    const t = this.settings.target;
    const concurrency = this.settings.concurrency;
    switch (t.type) {
      case 'echo':
        return createEchoTarget();
      case 'openai':
        return createOpenAiTarget({
          baseUrl: t.baseUrl,
          model: t.model,
          apiKey: await this.tokens.getOpenAiKey(),
          ...(t.systemPrompt ? { systemPrompt: t.systemPrompt } : {}),
          ...(t.temperature !== undefined ? { temperature: t.temperature } : {}),
          ...(t.maxTokens !== undefined ? { maxTokens: t.maxTokens } : {}),
          connections: concurrency,
        });
      case 'http':
        return createHttpTarget({ ...t, connections: concurrency });
      case 'command':
        return createCommandTarget({ command: t.command, ...(workspaceDir() ? { cwd: workspaceDir()! } : {}) });
      case 'vscode-lm':
        return createLmTarget(t.model);
      case 'manual':
        return undefined;
    }
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) d.dispose();
  }
}

export async function askToken(origin: string): Promise<string | undefined> {
  const token = await vscode.window.showInputBox({
    title: 'Eval Runner: Set Token',
    prompt: `Personal access token for ${origin} (kept in VS Code's secret storage)`,
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (/\s/.test(v.trim()) ? 'A token has no spaces.' : undefined),
  });
  return token?.trim() || undefined;
}

function workspaceDir(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
}
