import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/**
 * The page every Eval Runner webview starts from: CSP default-src 'none', scripts only with this page's
 * crypto nonce, styles, fonts and images only from media/ (the webview's localResourceRoots). The scripts
 * build the page with textContent: nothing the service or a target says is ever parsed as HTML.
 */
export function webviewHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { title: string; scripts: string[]; bodyClass?: string; appAttributes?: string },
): string {
  const media = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', ...p)).toString();
  const nonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const scripts = page.scripts.map((s) => `<script nonce="${nonce}" src="${media(s)}"></script>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${media('codicons', 'codicon.css')}">
<link rel="stylesheet" href="${media('progress.css')}">
<title>${page.title}</title>
</head>
<body${page.bodyClass ? ` class="${page.bodyClass}"` : ''}>
<div id="app"${page.appAttributes ? ` ${page.appAttributes}` : ''}></div>
${scripts}
</body>
</html>`;
}
