import type * as vscode from 'vscode';

/** Minimal activation until the extension's features land: it proves the bundle loads in an editor. */
export function activate(_context: vscode.ExtensionContext): void {
  // Registrations are added here as features arrive; each goes into context.subscriptions.
}

export function deactivate(): void {}
