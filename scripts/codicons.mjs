// The webviews' icon stylesheet: @vscode/codicons' own, cut to the icons the pages draw (src/webview/app/icons.ts,
// the one list). The full stylesheet is 29.6 KB, a rule for each of some 500 icons, which each page fetched through
// the webview's service worker and parsed before its first paint while a run went on; the pages draw 19.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The names in src/webview/app/icons.ts, read from the module itself (bundled in memory, then imported). */
export async function iconNames() {
  const out = await build({ entryPoints: [`${ROOT}src/webview/app/icons.ts`], bundle: true, format: 'esm', platform: 'neutral', write: false, logLevel: 'warning' });
  const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
  return /** @type {readonly string[]} */ (mod.ICONS);
}

/**
 * The stylesheet with only `names`' glyph rules; the rest (the font face, the base rule, the modifiers) kept as
 * they are. Throws on a name the codicons do not draw, so a misspelt icon fails the build instead of showing nothing.
 * @param {string} css @vscode/codicons' codicon.css
 * @param {readonly string[]} names
 */
export function codiconSubset(css, names) {
  const glyph = /^\.codicon-([a-z0-9-]+):before \{ content: "[^"]*" \}\n?/gm;
  const known = new Set([...css.matchAll(glyph)].map((m) => m[1]));
  const missing = names.filter((n) => !known.has(n));
  if (missing.length) throw new Error(`Not a codicon: ${missing.join(', ')} (src/webview/app/icons.ts)`);
  const wanted = new Set(names);
  return css.replace(glyph, (line, name) => (wanted.has(name) ? line : ''));
}

/** The package's stylesheet cut to the pages' icons, for media/codicons/ beside its font. */
export async function codiconStylesheet() {
  return codiconSubset(readFileSync(`${ROOT}node_modules/@vscode/codicons/dist/codicon.css`, 'utf8'), await iconNames());
}
