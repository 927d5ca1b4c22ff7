// Writes l10n/bundle.l10n.json: every message the extension shows through vscode.l10n.t, keyed by its English
// text (the shape @vscode/l10n-dev exports; a translation is a copy with another locale's values,
// bundle.l10n.<locale>.json). test/unit/l10n.test.ts checks the bundle matches the sources.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export function l10nMessages(dir = 'src/extension') {
  /** @type {Record<string, string>} */
  const messages = {};
  // Every .ts under the folder, in a stable order (the extension is a folder per feature).
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).sort();
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    // vscode.l10n.t('…') or ("…"): the first argument is always a plain literal (see the house style).
    for (const m of text.matchAll(/vscode\.l10n\.t\(\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/g)) {
      const raw = m[1] ?? m[2];
      const message = unescapeJs(raw);
      messages[message] = message;
    }
  }
  return messages;
}

/** A JS string literal's body as the string it stands for (the escapes the sources use). */
/** @param {string} raw */
function unescapeJs(raw) {
  /** @type {Record<string, string>} */
  const simple = { n: '\n', r: '\r', t: '\t', 0: '\0' };
  return raw.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_, e) => {
    if (e[0] === 'u' || e[0] === 'x') return String.fromCodePoint(parseInt(e.replace(/^[ux]\{?|\}$/g, ''), 16));
    return simple[e] ?? e;
  });
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  mkdirSync('l10n', { recursive: true });
  const messages = l10nMessages();
  writeFileSync('l10n/bundle.l10n.json', `${JSON.stringify(messages, null, 2)}\n`);
  console.log(`l10n/bundle.l10n.json: ${Object.keys(messages).length} messages`);
}
