import assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { webviewHtml } from '../../src/extension/panels/webviewHtml';

/** The part of a webview and a Uri the page uses: media/ paths as the webview would serve them. */
interface FakeUri {
  readonly path: string;
  with(change: { path: string }): FakeUri;
  toString(): string;
}
const uri = (path: string): FakeUri => ({ path, with: (change) => uri(change.path), toString: () => `https://file+.vscode-resource.example${path}` });
const webview = { cspSource: 'https://file+.vscode-resource.example', asWebviewUri: (u: FakeUri) => u } as unknown as vscode.Webview;
const extensionUri = uri('/ext') as unknown as vscode.Uri;

describe('the webview page shell', () => {
  it('escapes its title, body class and the app attributes: text, never markup', () => {
    const html = webviewHtml(webview, extensionUri, {
      title: 'Run Details </title><script>alert(1)</script>',
      scripts: ['webview/runDetails.js'],
      bodyClass: 'compare" onload="alert(2)',
      appAttributes: { 'data-labels': '{"a":"</div><img src=x onerror=alert(3)>"}' },
    });
    assert.match(html, /<title>Run Details &#60;\/title&#62;&#60;script&#62;alert\(1\)&#60;\/script&#62;<\/title>/);
    assert.match(html, /<body class="compare&#34; onload=&#34;alert\(2\)">/);
    assert.match(html, /<div id="app" data-labels="\{&#34;a&#34;:&#34;&#60;\/div&#62;&#60;img src=x onerror=alert\(3\)&#62;&#34;\}"><\/div>/);
    assert.equal((html.match(/<script/g) ?? []).length, 1, 'one script element: the page\'s own');
    assert.match(html, /<script nonce="[A-Za-z0-9+/=]+" src="https:\/\/file\+\.vscode-resource\.example\/ext\/media\/webview\/runDetails\.js"><\/script>/);
    // One stylesheet (the icons' and the pages', built together): each is a request through the webview's service worker.
    assert.deepEqual(html.match(/<link [^>]*>/g), ['<link rel="stylesheet" href="https://file+.vscode-resource.example/ext/media/webview/page.css">']);
  });

  it('takes only data- attribute names (a name cannot be escaped)', () => {
    assert.throws(() => webviewHtml(webview, extensionUri, { title: 't', scripts: [], appAttributes: { 'onload=alert(1) x': '' } }), /Not a data- attribute name/);
  });
});
