// One esbuild script for every bundle. Production bundles are minified and carry no sourcemap,
// so nothing under dist/ can leak source paths into the VSIX; --dev adds inline maps for debugging.
import { cpSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const dev = process.argv.includes('--dev');
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: !dev,
  sourcemap: dev ? 'inline' : false,
  legalComments: 'none',
  logLevel: 'warning',
};

await Promise.all([
  build({ ...common, entryPoints: ['src/extension/main.ts'], outfile: 'dist/extension.js', external: ['vscode'] }),
  build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } }),
]);

// The webview's icon font comes from @vscode/codicons; copied (not committed) so the VSIX carries it.
mkdirSync('media/codicons', { recursive: true });
for (const f of ['codicon.css', 'codicon.ttf']) cpSync(`node_modules/@vscode/codicons/dist/${f}`, `media/codicons/${f}`);
