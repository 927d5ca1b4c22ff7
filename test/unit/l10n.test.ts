import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(__dirname, '..', '..', '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

describe('localisable: package.nls.json and vscode.l10n', () => {
  it('defines every %key% package.json uses, and holds no key nobody uses', () => {
    const pkg = read('package.json');
    const nls = JSON.parse(read('package.nls.json')) as Record<string, string>;
    const used = new Set([...pkg.matchAll(/"%([^%"]+)%"/g)].map((m) => m[1]!));
    assert.ok(used.size > 50, `package.json uses ${used.size} keys`);
    assert.deepEqual([...used].filter((k) => !(k in nls)), [], 'keys package.json uses that package.nls.json lacks');
    assert.deepEqual(Object.keys(nls).filter((k) => !used.has(k)), [], 'keys nobody uses');
    for (const [k, v] of Object.entries(nls)) assert.ok(v.trim(), `${k} is empty`);
  });

  it('contributes no title or description as a bare string', () => {
    const pkg = JSON.parse(read('package.json')) as { contributes: { commands: Array<{ title: string; category?: string }>; configuration: { properties: Record<string, { description?: string; markdownDescription?: string }> } } };
    for (const c of pkg.contributes.commands) assert.match(`${c.title}${c.category ?? ''}`, /^(%[^%]+%)+$/);
    for (const [name, p] of Object.entries(pkg.contributes.configuration.properties)) {
      if (p.description !== undefined || p.markdownDescription !== undefined) assert.match(p.description ?? p.markdownDescription ?? '', /^%.+%$/, name);
      for (const d of (p as { enumDescriptions?: string[] }).enumDescriptions ?? []) assert.match(d, /^%.+%$/, name);
    }
  });

  it('shows run-time messages through vscode.l10n.t, and l10n/bundle.l10n.json holds every one of them', async () => {
    const dir = join(ROOT, 'src', 'extension');
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      // A message given as a literal (on the call's line or the next) must go through vscode.l10n.t.
      const raw = [...text.matchAll(/show(?:Information|Warning|Error)Message\(\s*['`"]/g), ...text.matchAll(/show(?:Information|Warning|Error)Message\(\s*\n\s*['`"]/g)];
      assert.equal(raw.length, 0, `${file} shows a message that is not localisable`);
    }
    const { l10nMessages } = (await import(pathToFileURL(join(ROOT, 'scripts', 'l10nExport.mjs')).href)) as { l10nMessages: (dir: string) => Record<string, string> };
    const bundle = JSON.parse(read('l10n/bundle.l10n.json')) as Record<string, string>;
    assert.deepEqual(bundle, l10nMessages(dir), 'run `node scripts/l10nExport.mjs` after changing a message');
  });
});
