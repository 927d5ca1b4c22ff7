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
 * A glyph rule of codicon.css: the icon's name and, when its content is a single `\hex` escape, its code point.
 * The one reading of the stylesheet, both for the rules kept and for the font's glyphs.
 */
const GLYPH_RULE = /^\.codicon-([a-z0-9-]+):before \{ content: "(?:\\([0-9a-fA-F]+)|[^"]*)" \}\n?/gm;

/**
 * The stylesheet with only `names`' glyph rules; the rest (the font face, the base rule, the modifiers) kept as
 * they are, and those glyphs' code points, in `names`' order, for codiconFont. Throws on a name the codicons do not
 * draw, so a misspelt icon fails the build instead of showing nothing, on a listed icon whose rule gives no code
 * point, and on a stylesheet with no glyph rule at all (its format changed, and every icon would go).
 * @param {string} css @vscode/codicons' codicon.css
 * @param {readonly string[]} names
 * @returns {{ css: string, codePoints: number[] }}
 */
export function codiconSubset(css, names) {
  const rules = new Map([...css.matchAll(GLYPH_RULE)].map((m) => [m[1], m[2]]));
  if (!rules.size) throw new Error("codicon.css's format changed: update scripts/codicons.mjs");
  const missing = names.filter((n) => !rules.has(n));
  if (missing.length) throw new Error(`Not a codicon: ${missing.join(', ')} (src/webview/app/icons.ts)`);
  const pointless = names.filter((n) => rules.get(n) === undefined);
  if (pointless.length) throw new Error(`codicon.css gives no \\hex code point for ${pointless.join(', ')}: update scripts/codicons.mjs`);
  const wanted = new Set(names);
  return {
    css: css.replace(GLYPH_RULE, (line, name) => (wanted.has(name) ? line : '')),
    codePoints: names.map((n) => parseInt(/** @type {string} */ (rules.get(n)), 16)),
  };
}

/** The package's stylesheet cut to the pages' icons, for media/codicons/ beside its font, and their code points. */
export async function codiconStylesheet() {
  return codiconSubset(readFileSync(`${ROOT}node_modules/@vscode/codicons/dist/codicon.css`, 'utf8'), await iconNames());
}

/**
 * A font file's tables by tag, each a view of the file (its table directory read, nothing checked).
 * @param {Buffer} ttf
 * @returns {Map<string, Buffer>}
 */
export function fontTables(ttf) {
  const tables = new Map();
  for (let i = 0; i < ttf.readUInt16BE(4); i++) {
    const at = 12 + 16 * i;
    tables.set(ttf.toString('latin1', at, at + 4), ttf.subarray(ttf.readUInt32BE(at + 8), ttf.readUInt32BE(at + 8) + ttf.readUInt32BE(at + 12)));
  }
  return tables;
}

/**
 * The codicon font with the outlines of `codePoints`' glyphs only (80 KB to 13 KB: the page fetches it through the
 * webview's service worker and the browser checks every table of it before drawing an icon). Every glyph keeps its
 * number, its metrics and its cmap entry, so the glyphs left out are empty, never another icon; the glyph names
 * (`post`, 6 KB) go, as the page never reads them. No outline of this font is composite (checked), so a glyph
 * needs no other.
 * @param {Buffer} ttf @vscode/codicons' codicon.ttf
 * @param {readonly number[]} codePoints
 */
export function codiconFont(ttf, codePoints) {
  const tables = fontTables(ttf);
  const table = (tag) => tables.get(tag) ?? assertFail(`no ${tag} table`);
  if (table('head').readInt16BE(50) !== 0) assertFail('a long loca table');
  const glyphs = table('maxp').readUInt16BE(4);
  const loca = table('loca');
  const glyf = table('glyf');
  const keep = new Set([0, ...codePoints.map((c) => glyphOf(table('cmap'), c))]);
  const outlines = [];
  const offsets = Buffer.alloc(2 * (glyphs + 1));
  let size = 0;
  for (let g = 0; g < glyphs; g++) {
    const outline = keep.has(g) ? glyf.subarray(2 * loca.readUInt16BE(2 * g), 2 * loca.readUInt16BE(2 * g + 2)) : Buffer.alloc(0);
    if (outline.length >= 2 && outline.readInt16BE(0) < 0) assertFail(`glyph ${g} is composite`);
    offsets.writeUInt16BE(size / 2, 2 * g);
    outlines.push(outline, Buffer.alloc(outline.length % 2));
    size += outline.length + (outline.length % 2);
  }
  offsets.writeUInt16BE(size / 2, 2 * glyphs);
  tables.set('glyf', Buffer.concat(outlines));
  tables.set('loca', offsets);
  const post = Buffer.from(table('post').subarray(0, 32));
  post.writeUInt32BE(0x00030000, 0);
  tables.set('post', post);
  return sfnt(tables);
}

/**
 * @param {string} what
 * @returns {never}
 */
function assertFail(what) {
  throw new Error(`codicon.ttf: ${what}, which scripts/codicons.mjs does not cut: pin @vscode/codicons 0.0.36 (whose font it cuts) or extend codiconFont`);
}

/** A code point's glyph, from the cmap's Windows full-repertoire subtable (format 12). */
function glyphOf(cmap, codePoint) {
  for (let i = 0; i < cmap.readUInt16BE(2); i++) {
    const sub = cmap.readUInt32BE(4 + 8 * i + 4);
    if (cmap.readUInt16BE(4 + 8 * i) !== 3 || cmap.readUInt16BE(4 + 8 * i + 2) !== 10 || cmap.readUInt16BE(sub) !== 12) continue;
    for (let k = 0; k < cmap.readUInt32BE(sub + 12); k++) {
      const at = sub + 16 + 12 * k;
      if (codePoint >= cmap.readUInt32BE(at) && codePoint <= cmap.readUInt32BE(at + 4)) return cmap.readUInt32BE(at + 8) + codePoint - cmap.readUInt32BE(at);
    }
  }
  return assertFail(`no glyph for U+${codePoint.toString(16)}`);
}

/** The font file of these tables: its directory, each table 4-byte aligned with its checksum, and head's adjustment. */
function sfnt(tables) {
  const tags = [...tables.keys()].sort();
  const header = Buffer.alloc(12 + 16 * tags.length);
  header.writeUInt32BE(0x00010000, 0);
  const log2 = Math.floor(Math.log2(tags.length));
  header.writeUInt16BE(tags.length, 4);
  header.writeUInt16BE(16 * 2 ** log2, 6);
  header.writeUInt16BE(log2, 8);
  header.writeUInt16BE(16 * tags.length - 16 * 2 ** log2, 10);
  const head = Buffer.from(tables.get('head'));
  head.writeUInt32BE(0, 8);
  tables.set('head', head);
  const parts = [header];
  let offset = header.length;
  tags.forEach((tag, i) => {
    const data = tables.get(tag);
    const at = 12 + 16 * i;
    header.write(tag, at, 'latin1');
    header.writeUInt32BE(checksum(data), at + 4);
    header.writeUInt32BE(offset, at + 8);
    header.writeUInt32BE(data.length, at + 12);
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
    parts.push(padded);
    offset += padded.length;
  });
  const font = Buffer.concat(parts);
  const headAt = header.readUInt32BE(12 + 16 * tags.indexOf('head') + 8);
  font.writeUInt32BE((0xb1b0afba - checksum(font)) >>> 0, headAt + 8);
  return font;
}

/** A table's (or the file's) checksum: its 32-bit words summed, the last one padded with zeros. */
function checksum(data) {
  let sum = 0;
  for (let i = 0; i < data.length; i += 4) {
    const word = Buffer.alloc(4);
    data.copy(word, 0, i, Math.min(i + 4, data.length));
    sum = (sum + word.readUInt32BE(0)) >>> 0;
  }
  return sum;
}
