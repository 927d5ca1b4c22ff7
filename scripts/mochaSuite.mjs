// Runs one mocha suite (files matching a folder) and ends with the plain closing line
// "<suite>: N passed, N failed, N skipped" that CI and scripts/test.mjs read.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

const [suite, dir, ...rest] = process.argv.slice(2);
const grep = rest.find((a) => a.startsWith('--grep='))?.slice(7);
const files = (function walk(d) {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(d, e.name)) : /\.test\.m?js$/.test(e.name) ? [join(d, e.name)] : [],
  );
})(dir).sort();

const mocha = new Mocha({ reporter: 'spec', timeout: 30_000, ...(grep ? { grep } : {}) });
for (const f of files) mocha.addFile(f);
// ESM test files (the e2e suite) need the async loader.
await mocha.loadFilesAsync();
const runner = mocha.run();
runner.on('end', () => {
  const { passes = 0, failures = 0, pending = 0 } = runner.stats ?? {};
  console.log(`${suite}: ${passes} passed, ${failures} failed, ${pending} skipped`);
  // Open handles left by a broken test must not hang CI.
  setTimeout(() => process.exit(failures > 0 ? 1 : 0), 200).unref();
  process.exitCode = failures > 0 ? 1 : 0;
});
