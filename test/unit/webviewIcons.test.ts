import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(__dirname, '..', '..', '..');
const APP = join(ROOT, 'src', 'webview', 'app');

interface Codicons {
  iconNames: () => Promise<readonly string[]>;
  codiconSubset: (css: string, names: readonly string[]) => string;
  codiconStylesheet: () => Promise<string>;
}
const codicons = async () => (await import(pathToFileURL(join(ROOT, 'scripts', 'codicons.mjs')).href)) as Codicons;
const glyphs = (css: string) => [...css.matchAll(/^\.codicon-([a-z0-9-]+):before \{/gm)].map((m) => m[1]!).sort();

// The webviews' stylesheet holds only the icons of src/webview/app/icons.ts (scripts/codicons.mjs): an icon a page
// draws that the list lacks would be an empty square, so the pages' icons are read from their sources here (icon()
// and iconButton() take the list's names only, which tsc checks; these are the names written out).
describe('the webview icons: one list, and the stylesheet cut to it', () => {
  it('lists every codicon a page names, and the stylesheet draws exactly those', async () => {
    const { iconNames, codiconStylesheet } = await codicons();
    const listed = await iconNames();
    const all = new Set(glyphs(readFileSync(join(ROOT, 'node_modules', '@vscode', 'codicons', 'dist', 'codicon.css'), 'utf8')));
    const pages = readdirSync(APP).filter((f) => f.endsWith('.ts') && f !== 'icons.ts');
    // A page's icons: the string literals that name a codicon on the lines that draw one (a message's type is none).
    const used = new Set<string>();
    for (const f of pages) {
      for (const line of readFileSync(join(APP, f), 'utf8').split('\n')) {
        if (!/icon\(|iconButton\(|actionButton\(|^\s+[a-z]+: '[a-z-]+',$/i.test(line)) continue;
        for (const [, name] of line.matchAll(/(?<!type: )'([a-z][a-z0-9-]*)'/g)) if (all.has(name!)) used.add(name!);
      }
    }
    assert.ok(used.size >= 15, `found the pages' icons (${[...used].join(', ')})`);
    assert.deepEqual([...used].filter((n) => !listed.includes(n)), [], 'icons the pages draw that src/webview/app/icons.ts lacks');
    assert.deepEqual(glyphs(await codiconStylesheet()), [...listed].sort());
    assert.deepEqual(glyphs(readFileSync(join(ROOT, 'media', 'codicons', 'codicon.css'), 'utf8')), [...listed].sort(), 'the built stylesheet (node scripts/build.mjs)');
  });

  it('keeps the font and the running icon\'s turn, and refuses a name the codicons do not draw', async () => {
    const { codiconStylesheet, codiconSubset } = await codicons();
    const css = await codiconStylesheet();
    assert.match(css, /@font-face \{[^}]*src: url\("\.\/codicon\.ttf\?[0-9a-f]+"\) format\("truetype"\)/);
    assert.match(css, /\.codicon-sync\.codicon-modifier-spin,[^{]*\{[^}]*animation: codicon-spin/);
    assert.ok(css.length < 4_000, `${css.length} characters`);
    assert.throws(() => codiconSubset(css, ['thumbsup', 'thumbs-sideways']), /Not a codicon: thumbs-sideways/);
  });
});
