// Copies the e2e screenshots worth showing into docs/ (run after npm test; the e2e suite writes them).
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';

const FROM = 'test-results/e2e/screenshots';
mkdirSync('docs', { recursive: true });
for (const name of ['tree', 'webview-dark', 'webview-light', 'review', 'token-rejected', 'run-identity-question', 'process-details-review', 'review-verdict', 'compare-runs', 'rerun-compare']) {
  const source = `${FROM}/${name}.png`;
  if (!existsSync(source)) throw new Error(`${source} is missing: run npm test first`);
  copyFileSync(source, `docs/${name}.png`);
}
console.log('docs/ screenshots updated');
