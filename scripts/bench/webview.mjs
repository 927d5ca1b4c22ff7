// 8. The Run Details webview with 100,000 rows, in the real workbench (code-server + Chromium).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { editorReady, measureAfter, packageVsix, pickIfAsked, setToken, waitForFrame } from './editor.mjs';
import { ROOT, say } from './processes.mjs';

const require = createRequire(import.meta.url);

export const names = ['webview'];

export async function measure() {
  const figures = {};
  say('8. webview: 100,000 rows in the real workbench; first render and filters, measured in the browser');
  if (!editorReady()) throw new Error('the editor set-up failed');
  packageVsix();
  const { startSandbox } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));
  const { openWorkbench, palette, notification } = await import('../../test/e2e/workbenchPage.mjs');
  const sb = await startSandbox({ port: 0, benchmarkTraces: 100_000, token: 'bench-token' });
  const wb = await openWorkbench({
    settings: {
      'evalRunner.baseUrl': sb.baseUrl,
      'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Bench 100k' }],
      'evalRunner.target': { type: 'echo' },
    },
  });
  try {
    const { page } = wb;
    await setToken(page, 'bench-token');
    await palette(page, 'Eval Runner: Fetch Prompts');
    await pickIfAsked(page, 'Bench 100k');
    await notification(page, '100000 prompts fetched', 60_000);
    const t0 = performance.now();
    await palette(page, 'Eval Runner: Show Run Details');
    await pickIfAsked(page, 'Bench 100k');
    const frame = await waitForFrame(page, (f) => f.evaluate(() => performance.getEntriesByName('evalRunner:painted').length > 0), 60_000);
    const openToPaintMs = performance.now() - t0;
    const painted = await frame.evaluate(() => {
      const m = /** @type {PerformanceMark} */ (performance.getEntriesByName('evalRunner:painted')[0]);
      const first = /** @type {PerformanceMark} */ (performance.getEntriesByName('evalRunner:firstRows')[0] ?? m);
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime;
      return { scriptMs: at('evalRunner:script'), firstMessageMs: at('evalRunner:firstMessage'), sinceDocumentMs: m.startTime, firstRowsMs: first.startTime, firstRows: first.detail.rows, rows: m.detail.rows, domRows: document.querySelectorAll('.row').length };
    });
    const filters = {};
    for (const state of ['failed', 'pending', 'all']) {
      filters[state] = await measureAfter(frame, 'evalRunner:filter', () => frame.selectOption('select.filter', state));
    }
    const search = await measureAfter(frame, 'evalRunner:search', () => frame.fill('input[type="search"], input.search', 'variant 7'));
    figures.webview = { rows: painted.rows, domRows: painted.domRows, firstRenderMs: painted.firstRowsMs, scriptMs: painted.scriptMs, firstMessageMs: painted.firstMessageMs, firstRenderRows: painted.firstRows, allRowsMs: painted.sinceDocumentMs, commandToAllRowsMs: openToPaintMs, filterMs: filters, searchMs: search };
  } finally {
    await wb.close();
    await sb.close();
  }
  return figures;
}
