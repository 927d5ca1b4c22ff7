// The Python target in the editor: which interpreter runs it. (Its workers restart when a file beside it is saved:
// the runner does that, told of each save by the window that follows the run.)
import * as vscode from 'vscode';

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

/**
 * Whether the workspace chose the Python extension's interpreter: python.defaultInterpreterPath set in the workspace's
 * or a folder's settings (in Restricted Mode such an interpreter is not started).
 */
export function interpreterChosenByWorkspace(): boolean {
  const set = vscode.workspace.getConfiguration('python').inspect<string>('defaultInterpreterPath');
  return set?.workspaceValue !== undefined || set?.workspaceFolderValue !== undefined;
}
