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

export async function writeEvaluations(evaluations: ConfiguredEvaluation[]): Promise<void> {
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration(SECTION).update('evaluations', evaluations, target);
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
