// axe-core run inside a page or a webview's frame, as the accessibility checks of the e2e suite use it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const BLOCKING = new Set(['serious', 'critical']);

/**
 * The serious and critical violations axe finds in a frame's document, one line per rule and element. axe's source
 * goes in through the debugging protocol (Playwright's evaluate), which the pages' CSP does not govern: a script tag
 * would be refused by the webviews' nonce and the report's hashes.
 * @param {import('playwright-core').Frame | import('playwright-core').Page} frame
 */
export async function seriousViolations(frame) {
  await frame.evaluate(AXE_SOURCE);
  const violations = await frame.evaluate(async () => {
    const result = await globalThis.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary ?? '' })),
    }));
  });
  return violations
    .filter((v) => BLOCKING.has(v.impact))
    .flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id} (${v.help}) at ${n.target}: ${n.summary.replace(/\s+/g, ' ').slice(0, 240)}`));
}

/**
 * The Frame of the webview on screen (its inner active-frame), for evaluate: a FrameLocator cannot run scripts.
 * @param {import('playwright-core').Page} page
 */
export async function visibleWebviewFrame(page) {
  const outer = await page.locator('iframe.webview.ready:visible').first().elementHandle();
  const inner = await /** @type {import('playwright-core').Frame} */ (await outer.contentFrame()).locator('iframe#active-frame').elementHandle();
  return inner.contentFrame();
}
