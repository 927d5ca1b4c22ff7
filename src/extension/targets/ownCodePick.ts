// Select Target for the user's own code: a Python function (a workspace file, then one of its top-level functions)
// or a worker command. Its run, and restarting its workers on a save, are the runner's.
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { absoluteCommand } from '../../core';
import type { TargetSettings } from '../settings/settingsModel';
import type { Ctx } from '../ctx';

/** Top-level functions of a Python source, in file order ("def x(" or "async def x(" at the start of a line). */
export function topLevelFunctions(source: string): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/^(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(/gm)) if (!names.includes(m[1]!)) names.push(m[1]!);
  return names;
}

/** Select Target → Python function: a .py file of the workspace, then one of its top-level functions. */
export async function pickPythonTarget(ctx: Ctx): Promise<TargetSettings | undefined> {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  let file: vscode.Uri | undefined;
  const found = root ? await vscode.workspace.findFiles('**/*.py', '**/{node_modules,.venv,venv,.git,__pycache__,site-packages}/**', 2000) : [];
  if (found.length > 0) {
    const picked = await ctx.pickItem(
      found
        .map((uri) => ({ label: vscode.workspace.asRelativePath(uri, false), uri }))
        .sort((a, b) => a.label.localeCompare(b.label)),
      { title: vscode.l10n.t('Python function (1/2): which file?'), matchOnDescription: true },
    );
    file = picked?.uri;
  } else {
    file = (await vscode.window.showOpenDialog({ title: vscode.l10n.t('Python function: which file?'), filters: { Python: ['py'] }, canSelectMany: false }))?.[0];
  }
  if (!file) return undefined;
  const source = Buffer.from(await vscode.workspace.fs.readFile(file)).toString('utf8');
  const functions = topLevelFunctions(source);
  if (functions.length === 0) {
    void vscode.window.showWarningMessage(vscode.l10n.t('{0} has no top-level function: add e.g. "def answer(prompt):" and try again.', vscode.workspace.asRelativePath(file, false)));
    return undefined;
  }
  const ordered = functions.includes('answer') ? ['answer', ...functions.filter((f) => f !== 'answer')] : functions;
  const fn = await ctx.pickItem(
    ordered.map((name) => ({ label: name })),
    { title: vscode.l10n.t('Python function (2/2): which function answers a prompt?') },
  );
  if (!fn) return undefined;
  // Stored with its full path: a relative one would mean whichever workspace is open (a cloned repository's own file
  // of the same name), and in Restricted Mode it is refused.
  return { type: 'python', file: file.fsPath, function: fn.label };
}

/** Select Target → Worker: a long-lived command speaking the worker protocol. */
export async function pickWorkerTarget(): Promise<TargetSettings | undefined> {
  const command = await vscode.window.showInputBox({
    title: vscode.l10n.t('Worker command'),
    prompt: vscode.l10n.t('Started once per worker, without a shell: JSON lines in ({"id","prompt","traceId"}) and out ({"id","answer"})'),
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Required.')),
  });
  if (!command) return undefined;
  // Its files with their full paths, as a Python function's file: relative ones would mean whichever workspace is open.
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  return { type: 'worker', command: root?.scheme === 'file' ? absoluteCommand(command.trim(), root.fsPath, existsSync) : command.trim() };
}
