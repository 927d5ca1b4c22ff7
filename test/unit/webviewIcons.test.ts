import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(__dirname, '..', '..', '..');
const APP = join(ROOT, 'src', 'webview', 'app');

interface Codicons {
  iconNames: () => Promise<readonly string[]>;
  codiconSubset: (css: string, names: readonly string[]) => { css: string; codePoints: number[] };
  codiconStylesheet: () => Promise<{ css: string; codePoints: number[] }>;
  codiconFont: (ttf: Buffer, codePoints: readonly number[]) => Buffer;
  fontTables: (ttf: Buffer) => Map<string, Buffer>;
}
const codicons = async () => (await import(pathToFileURL(join(ROOT, 'scripts', 'codicons.mjs')).href)) as Codicons;
const glyphs = (css: string) => [...css.matchAll(/^\.codicon-([a-z0-9-]+):before \{/gm)].map((m) => m[1]!).sort();

// The webviews' stylesheet holds only the icons of src/webview/app/icons.ts (scripts/codicons.mjs): an icon a page
// draws that the list lacks would be an empty square, so the pages' icons are read from their sources here (icon()
// and iconButton() take the list's names only, which tsc checks; these are the names written out).
describe('the webview icons: one list, and the stylesheet and the font cut to it', () => {
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
    // tsc already refuses a page's icon the list lacks; the other way it does not: a listed icon no page draws
    // still weighs in the stylesheet and the font, so the list could only grow.
    assert.deepEqual([...used].filter((n) => !listed.includes(n)), [], 'icons the pages draw that src/webview/app/icons.ts lacks');
    assert.deepEqual(listed.filter((n) => !used.has(n)), [], 'icons src/webview/app/icons.ts lists that no page draws');
    assert.deepEqual(glyphs((await codiconStylesheet()).css), [...listed].sort());
    assert.deepEqual(glyphs(readFileSync(join(ROOT, 'media', 'webview', 'page.css'), 'utf8')), [...listed].sort(), 'the built stylesheet (node scripts/build.mjs)');
  });

  it('keeps the font and the running icon\'s turn, and refuses a name the codicons do not draw', async () => {
    const { codiconStylesheet, codiconSubset } = await codicons();
    const { css } = await codiconStylesheet();
    assert.match(css, /@font-face \{[^}]*src: url\("\.\/codicon\.ttf\?[0-9a-f]+"\) format\("truetype"\)/);
    assert.match(css, /\.codicon-sync\.codicon-modifier-spin,[^{]*\{[^}]*animation: codicon-spin/);
    assert.ok(css.length < 4_000, `${css.length} characters`);
    assert.throws(() => codiconSubset(css, ['thumbsup', 'thumbs-sideways']), /Not a codicon: thumbs-sideways/);
    const odd = '.codicon-thumbsup:before { content: "\\ea60" }\n.codicon-odd:before { content: "x" }\n';
    assert.deepEqual(codiconSubset(odd, ['thumbsup']), { css: '.codicon-thumbsup:before { content: "\\ea60" }\n', codePoints: [0xea60] });
    assert.throws(() => codiconSubset(odd, ['odd']), /no \\hex code point for odd/);
    assert.throws(() => codiconSubset(css.replaceAll(':before {', ':before{'), ['thumbsup']), /codicon\.css's format changed/);
  });

  it('cuts the font to those icons\' outlines: the same glyphs at the same numbers, the others empty', async () => {
    const { codiconStylesheet, codiconFont, fontTables } = await codicons();
    const original = readFileSync(join(ROOT, 'node_modules', '@vscode', 'codicons', 'dist', 'codicon.ttf'));
    const points = (await codiconStylesheet()).codePoints;
    const font = codiconFont(original, points);
    assert.deepEqual(readFileSync(join(ROOT, 'media', 'codicons', 'codicon.ttf')), font, 'the built font (node scripts/build.mjs)');
    assert.ok(font.length < 16_000, `${font.length} bytes`);
    const before = outlines(fontTables(original));
    const after = outlines(fontTables(font));
    assert.equal(after.length, before.length, 'every glyph keeps its number');
    const kept = new Set([0, ...points.map((p) => glyphOf(fontTables(original), p))]);
    assert.equal(kept.size, points.length + 1);
    after.forEach((outline, g) => assert.deepEqual(outline, kept.has(g) ? before[g] : Buffer.alloc(0), `glyph ${g}`));
    // The file's checksum adjustment: the whole file sums to 0xB1B0AFBA, as a font checker expects.
    assert.equal(sum(font), 0xb1b0afba);
  });
});

/** Each glyph's outline bytes (a short loca: offsets halved), by glyph number, of a font's tables (fontTables). */
function outlines(t: Map<string, Buffer>): Buffer[] {
  const loca = t.get('loca')!;
  const glyf = t.get('glyf')!;
  return Array.from({ length: t.get('maxp')!.readUInt16BE(4) }, (_, g) => glyf.subarray(2 * loca.readUInt16BE(2 * g), 2 * loca.readUInt16BE(2 * g + 2)));
}

/** A code point's glyph by the format 4 cmap (another subtable than the cutter reads). */
function glyphOf(t: Map<string, Buffer>, codePoint: number): number {
  const cmap = t.get('cmap')!;
  for (let i = 0; i < cmap.readUInt16BE(2); i++) {
    const sub = cmap.readUInt32BE(4 + 8 * i + 4);
    if (cmap.readUInt16BE(4 + 8 * i) !== 3 || cmap.readUInt16BE(4 + 8 * i + 2) !== 1) continue;
    const segments = cmap.readUInt16BE(sub + 6) / 2;
    for (let k = 0; k < segments; k++) {
      const end = cmap.readUInt16BE(sub + 14 + 2 * k);
      const start = cmap.readUInt16BE(sub + 16 + 2 * segments + 2 * k);
      if (codePoint < start || codePoint > end) continue;
      const delta = cmap.readInt16BE(sub + 16 + 4 * segments + 2 * k);
      const rangeAt = sub + 16 + 6 * segments + 2 * k;
      const range = cmap.readUInt16BE(rangeAt);
      return range === 0 ? (codePoint + delta) & 0xffff : (cmap.readUInt16BE(rangeAt + range + 2 * (codePoint - start)) + delta) & 0xffff;
    }
  }
  throw new Error(`no glyph for U+${codePoint.toString(16)}`);
}

function sum(data: Buffer): number {
  let total = 0;
  for (let i = 0; i < data.length; i += 4) total = (total + data.readUInt32BE(i)) >>> 0;
  return total;
}
