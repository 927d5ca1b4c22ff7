import * as vscode from 'vscode';
import { defaultStateDir } from '../../core';
import type { ProxyConfig } from '../../api/proxy';
import { editorProxy, resolveSettings } from './settingsModel';
import type { ConfiguredEvaluation, Settings, TargetSettings } from './settingsModel';

const SECTION = 'evalRunner';

/**
 * The one place settings are read. In an untrusted workspace the restricted settings (where the token goes,
 * what runs, what is opened) come only from user settings: see RESTRICTED_SETTINGS.
 */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return resolveSettings(
    { effective: (key) => config.get(key), user: (key) => config.inspect(key)?.globalValue },
    vscode.workspace.isTrusted,
    defaultStateDir(),
  );
}

/** Writes the sidebar's evaluations where they are read from (the workspace's list, when it has one), or where told. */
export async function writeEvaluations(evaluations: ConfiguredEvaluation[], where: 'user' | 'workspace' = evaluationsScope()): Promise<void> {
  const target = where === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration(SECTION).update('evaluations', evaluations, target);
}

/** Where the sidebar's evaluations come from: the workspace's own list hides the user's. */
export function evaluationsScope(): 'user' | 'workspace' {
  return vscode.workspace.getConfiguration(SECTION).inspect('evaluations')?.workspaceValue !== undefined ? 'workspace' : 'user';
}

/** The service's base URL, in user settings always: a workspace's value is ignored in an untrusted workspace. */
export async function writeBaseUrl(baseUrl: string): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update('baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
}

export async function writeTarget(target: TargetSettings): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update('target', target, vscode.ConfigurationTarget.Global);
}

export function onSettingsChanged(listener: () => void): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION)) listener();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(listener),
  );
}

/** The editor's proxy (see editorProxy), from the user's own http.* settings only, never a workspace's. */
export function readProxy(): ProxyConfig | null {
  const http = vscode.workspace.getConfiguration('http');
  const user = (key: string) => http.inspect(key)?.globalValue;
  return editorProxy(
    { proxy: user('proxy'), noProxy: user('noProxy'), proxyAuthorization: user('proxyAuthorization'), proxyStrictSSL: user('proxyStrictSSL'), proxySupport: user('proxySupport') },
    process.env,
  );
}
