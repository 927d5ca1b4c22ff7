import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
// Types only: the page is built without the editor's API at hand, so a unit test builds it too.
import type * as vscode from 'vscode';

/** Text as it stands in HTML, in an element or a quoted attribute: every interpolation below goes through it. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The page every Eval Runner webview starts from: CSP default-src 'none', scripts only with this page's
 * crypto nonce, styles, fonts and images only from media/ (the webview's localResourceRoots). The scripts
 * build the page with textContent: nothing the service or a target says is ever parsed as HTML, and what
 * this page puts in (the title, the app's data- attributes) is escaped.
 */
export function webviewHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { title: string; scripts: string[]; bodyClass?: string; appAttributes?: Readonly<Record<string, string>> },
): string {
  const media = (...p: string[]) => escapeHtml(webview.asWebviewUri(extensionUri.with({ path: posix.join(extensionUri.path, 'media', ...p) })).toString());
  const nonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const scripts = page.scripts.map((s) => `<script nonce="${escapeHtml(nonce)}" src="${media(s)}"></script>`).join('\n');
  // An attribute's name is checked, not escaped: a name cannot be quoted.
  const attributes = Object.entries(page.appAttributes ?? {}).map(([name, value]) => {
    if (!/^data-[a-z][a-z0-9-]*$/.test(name)) throw new TypeError(`Not a data- attribute name: ${JSON.stringify(name)}`);
    return ` ${name}="${escapeHtml(value)}"`;
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${media('codicons', 'codicon.css')}">
<link rel="stylesheet" href="${media('progress.css')}">
<title>${escapeHtml(page.title)}</title>
</head>
<body${page.bodyClass ? ` class="${escapeHtml(page.bodyClass)}"` : ''}>
<div id="app"${attributes.join('')}></div>
${scripts}
</body>
</html>`;
}
