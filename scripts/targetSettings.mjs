// Writes package.json's `evalRunner.target` schema, and the package.nls.json texts it names, from the target kinds'
// descriptors (src/core/targets/kinds). Run after a key or kind changes: `npx tsc -p . && node scripts/targetSettings.mjs`.
// test/unit/targetKinds.test.ts derives the same and fails while package.json differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const { targetSettingsSchema } = require(join(ROOT, 'out', 'src', 'core', 'targets', 'kinds', 'schemas.js'));

/** The texts the schema owns: configuration.target.<type>.<key> and configuration.target.type.<type>. */
const OWNED = /^configuration\.target\.(?!markdownDescription$)/;

const read = (name) => JSON.parse(readFileSync(join(ROOT, name), 'utf8'));
const write = (name, value) => writeFileSync(join(ROOT, name), `${JSON.stringify(value, null, 2)}\n`);

const { schema, nls } = targetSettingsSchema();
const pkg = read('package.json');
pkg.contributes.configuration.properties['evalRunner.target'] = schema;
write('package.json', pkg);
const texts = Object.fromEntries(Object.entries(read('package.nls.json')).filter(([key]) => !OWNED.test(key)));
write('package.nls.json', { ...texts, ...nls });
console.log(`evalRunner.target: ${schema.allOf.length} kinds, ${Object.keys(nls).length} texts written to package.json and package.nls.json.`);
