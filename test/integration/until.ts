import type * as vscode from 'vscode';

/** Waits (polling) until check() holds; fails naming what it waited for. */
export async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A tree item's tooltip as plain text (a string or a MarkdownString's source). */
export function tooltipText(tooltip: string | vscode.MarkdownString | undefined): string {
  return typeof tooltip === 'string' ? tooltip : tooltip?.value ?? '';
}

/** A tree item's label as plain text. */
export function labelText(label: string | vscode.TreeItemLabel | undefined): string {
  return typeof label === 'string' ? label : label?.label ?? '';
}
