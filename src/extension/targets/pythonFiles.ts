// The Python target in the editor: where its file is, which interpreter runs it, and restarting its workers when
// the file (or one beside it) is saved.
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../lifecycle';

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(path: string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

/**
 * The interpreter: the setting's, else the Python extension's active environment (through its API) when that
 * extension is installed, else undefined (python3, or py on Windows).
 */
export async function pythonInterpreter(configured: string | undefined, log: vscode.LogOutputChannel): Promise<string | undefined> {
  if (configured) return configured;
  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api.environments?.getActiveEnvironmentPath(folder);
    const resolved = active ? await api.environments!.resolveEnvironment(active.path) : undefined;
    return resolved?.executable?.uri?.fsPath;
  } catch (error) {
    log.warn(`The Python extension did not say which interpreter is active (${error instanceof Error ? error.message : String(error)}); using the default.`);
    return undefined;
  }
}

/** A target whose workers can start afresh (python, worker). */
export interface Restartable {
  restart(): void;
}

/**
 * Saving the target's Python file, or a .py file beside it, restarts the running workers before the next
 * trace, so the next answers come from the edit.
 */
export class PythonWatcher extends Disposable {
  private readonly live = new Set<{ target: Restartable; file: string }>();

  constructor(private readonly log: vscode.LogOutputChannel) {
    super();
    this._register(vscode.workspace.onDidSaveTextDocument((doc) => this.saved(doc.uri)));
    this._register(toDisposable(() => this.live.clear()));
  }

  /** Follows a python target for the length of its run; returns the way to stop following it. */
  follow(target: Restartable, file: string): () => void {
    const entry = { target, file };
    this.live.add(entry);
    return () => this.live.delete(entry);
  }

  saved(uri: vscode.Uri): void {
    if (uri.scheme !== 'file' || !uri.fsPath.endsWith('.py')) return;
    for (const { target, file } of this.live) {
      if (dirname(uri.fsPath) === dirname(file)) {
        this.log.info(`${vscode.workspace.asRelativePath(uri, false)} was saved: the Python workers restart before the next trace.`);
        target.restart();
      }
    }
  }
}

/**
 * Whether the workspace chose the Python extension's interpreter: python.defaultInterpreterPath set in the workspace's
 * or a folder's settings (in Restricted Mode such an interpreter is not started).
 */
export function interpreterChosenByWorkspace(): boolean {
  const set = vscode.workspace.getConfiguration('python').inspect<string>('defaultInterpreterPath');
  return set?.workspaceValue !== undefined || set?.workspaceFolderValue !== undefined;
}
