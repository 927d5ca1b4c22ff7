// Restricted Mode in the editor: where the user's own code (python, worker, command) may run. The places are gathered
// here and decided once in the core (ownCodeVerdict); a refusal is said in words, with the way to trust the folder.
import { mkdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import { ownCodeVerdict } from '../../core';
import type { OwnCodeVerdict, TargetSpec } from '../../core';

/** VS Code's own command for the workspace's trust (the Workspace Trust editor). */
export const MANAGE_TRUST_COMMAND = 'workbench.trust.manage';

/**
 * The verdict for this window: its trust, its folders on disk, symlinks followed. In Restricted Mode the working
 * folder is the program's own folder, else the home folder, else the editor's storage for Eval Runner, whichever is
 * neither in a workspace folder nor holds one.
 */
export function ownCodePlace(spec: TargetSpec, interpreter: { path: string; byWorkspace: boolean } | undefined, storage: string): OwnCodeVerdict {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const trusted = vscode.workspace.isTrusted;
  // Untrusted, a .code-workspace file comes with the repository that holds it, whichever folders it lists.
  const file = vscode.workspace.workspaceFile;
  if (!trusted && file?.scheme === 'file') folders.push(dirname(file.fsPath));
  const verdict = ownCodeVerdict({ spec, trusted, folders, ...(interpreter ? { interpreter } : {}), fallbacks: [homedir(), storage], realpath });
  if (verdict.ok && verdict.cwd === storage) mkdirSync(storage, { recursive: true });
  return verdict;
}

function realpath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** Why the target does not run in Restricted Mode, naming the path and what to do. */
export function refusalText(verdict: Extract<OwnCodeVerdict, { ok: false }>): string {
  const { path } = verdict;
  switch (verdict.refused) {
    case 'file':
      return verdict.relative
        ? vscode.l10n.t('Restricted Mode: a relative path means the workspace, and {0} is in it: not run. Trust this folder, or select a file by its full path outside it.', path)
        : vscode.l10n.t('Restricted Mode: {0} is in the workspace: not run. Trust this folder, or select a target outside it.', path);
    case 'interpreter':
      return vscode.l10n.t('Restricted Mode: the Python interpreter {0} is in the workspace: not started. Trust this folder, or name another in evalRunner.target\'s "python".', path);
    case 'workspaceInterpreter':
      return vscode.l10n.t('Restricted Mode: this workspace\'s settings chose the Python interpreter {0}: not started. Trust this folder, or name one in evalRunner.target\'s "python".', path);
    case 'workingFolder':
      return vscode.l10n.t('Restricted Mode: your code has no working folder outside this workspace ({0} holds it). Trust this folder to run it.', path);
  }
}

/** The refusal as an error with a "Trust this folder" button; not awaited, so a run that was refused ends at once. */
export function showRefusal(message: string): void {
  void vscode.window.showErrorMessage(message, trustButton()).then(offerTrust);
}

/** The button that opens VS Code's workspace trust. */
export function trustButton(): string {
  return vscode.l10n.t('Trust this folder');
}

/** Opens the workspace trust editor when the choice was the trust button. */
export async function offerTrust(choice: string | undefined): Promise<void> {
  if (choice === trustButton()) await vscode.commands.executeCommand(MANAGE_TRUST_COMMAND);
}
