import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
// Types only: the page is built without the editor's API at hand, so a unit test builds it too.
import type * as vscode from 'vscode';
import { escapeHtml, pageStart } from '../../core';


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
  // One stylesheet, built from the icons' and src/webview/styles/progress.css (scripts/build.mjs): a request less per page.
  const head = `<link rel="stylesheet" href="${media('webview', 'page.css')}">`;
  return `${pageStart({ csp, title: page.title, head, ...(page.bodyClass ? { bodyClass: page.bodyClass } : {}) })}
<div id="app"${attributes.join('')}></div>
${scripts}
</body>
</html>`;
}
