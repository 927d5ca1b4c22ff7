// axe-core on every page Eval Runner draws: Run Details and Compare Runs in the real workbench (dark and light
// themes), and the HTML report (light and dark). A serious or critical violation (text or selection colours too
// faint, a control without a name, broken roles) fails the test and names the rule and the element.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, launchBrowser } from '../harness/workbench.mjs';
import { seriousViolations, visibleWebviewFrame } from './axe.mjs';
import { RESULTS, inputBox, notification, openWorkbench, palette, shot, visibleWebview } from './workbenchPage.mjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));
const { cli } = require(join(ROOT, 'out', 'test', 'unit', 'helpers', 'cli.js'));

const TRACES = 12;
// The second run's command fails the two "Translate to French" prompts (grep selects no line and exits 1), so Run
// Details has failed rows, the error colour and the error column on screen.
const FAILING = 'grep -v Translate';

async function assertAccessible(frame, where) {
  const found = await seriousViolations(frame);
  assert.deepEqual(found, [], `axe-core: serious or critical violations in ${where}:\n${found.join('\n')}`);
}

/**
 * Every icon on the page draws its glyph: the webviews' stylesheet and font hold only the icons of
 * src/webview/app/icons.ts (scripts/codicons.mjs), so one a page draws without listing it would be an empty box,
 * which axe cannot see. Each icon's character is drawn on a canvas in the page's codicon font: no ink, no glyph.
 */
async function assertIconsDrawn(frame, where) {
  const { count, font, blank } = await frame.evaluate(async () => {
    const icons = Array.from(document.querySelectorAll('.codicon'));
    await document.fonts.load('16px codicon', '\uea6b');
    const ink = (character) => {
      const canvas = document.createElement('canvas');
      canvas.width = canvas.height = 32;
      const g = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
      g.font = '24px codicon';
      g.fillText(character, 4, 26);
      return g.getImageData(0, 0, 32, 32).data.some((v, i) => i % 4 === 3 && v > 0);
    };
    /** @type {string[]} */
    const faces = [];
    document.fonts.forEach((f) => {
      if (f.family.replace(/"/g, '') === 'codicon') faces.push(f.status);
    });
    const content = (n) => getComputedStyle(n, '::before').content;
    return { count: icons.length, font: faces, blank: icons.filter((n) => !/^"\S"$/u.test(content(n)) || !ink(content(n).slice(1, -1))).map((n) => n.className) };
  });
  assert.ok(count > 10, `${where} shows its icons (${count})`);
  assert.deepEqual(font, ['loaded'], `the codicon font in ${where}`);
  assert.deepEqual(blank, [], `icons without a glyph in ${where}`);
}

describe('accessibility (axe-core): no serious or critical violation', function () {
  this.timeout(180_000);
  let wb;

  afterEach(async function () {
    if (wb && this.currentTest?.state === 'failed') {
      const dir = join(RESULTS, 'failures');
      mkdirSync(dir, { recursive: true });
      await wb.page.screenshot({ path: join(dir, `${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`) }).catch(() => undefined);
    }
    await wb?.close();
    wb = undefined;
  });

  for (const theme of ['Default Dark Modern', 'Default Light Modern']) {
    it(`Run Details (failed rows, an active row, full text, charts) and Compare Runs in ${theme}`, async () => {
      const sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, generationSeconds: 0 });
      try {
        wb = await openWorkbench({
          theme,
          settings: {
            'evalRunner.baseUrl': sandbox.baseUrl,
            'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Axe bench' }],
            'evalRunner.target': { type: 'command', command: 'tr a-z A-Z' },
          },
        });
        const { page } = wb;
        await palette(page, 'Eval Runner: Set Token');
        await inputBox(page, 'Token', sandbox.token, { password: true });
        await notification(page, 'saved in secret storage');
        await palette(page, 'Eval Runner: Run Evaluation');
        await notification(page, `Axe bench: ${TRACES}/${TRACES} submitted`, 60_000);

        // A second run whose command fails two traces: failed rows, and two runs to compare.
        await palette(page, 'Eval Runner: Select Target', { pick: 'Shell command' });
        await inputBox(page, 'Shell command', FAILING);
        await notification(page, 'Target: Shell command');
        await palette(page, 'Notifications: Clear All Notifications');
        await palette(page, 'Eval Runner: Run Evaluation');
        await page.locator('.monaco-dialog-box a.monaco-button', { hasText: 'Start Fresh' }).click();
        await notification(page, `${TRACES - 2}/${TRACES} submitted`, 60_000);

        await palette(page, 'Eval Runner: Show Run Details');
        const details = visibleWebview(page);
        await details.locator('.row.state-failed').first().waitFor({ timeout: 30_000 });
        await details.locator('.charts svg.chart').first().waitFor();
        await details.getByRole('checkbox', { name: 'Full text' }).check();
        // The active row, with the grid focused (the list's selection colours) and its full text below.
        await details.getByRole('grid', { name: 'Traces' }).focus();
        // To bench-0002 by its id, one row at a time, each press seen drawn before the next. Stepping to the first
        // failed row stopped at bench-0010 in CI: bench-0002's row could still be drawn as the first run left it.
        await page.keyboard.press('Home');
        await details.locator('.row.active[aria-rowindex="2"]').waitFor();
        for (let row = 3; row <= TRACES + 1 && !(await details.locator('.row.active', { hasText: 'bench-0002' }).count()); row++) {
          await page.keyboard.press('ArrowDown');
          await details.locator(`.row.active[aria-rowindex="${row}"]`).waitFor();
        }
        await details.locator('.row.active.state-failed', { hasText: 'bench-0002' }).waitFor();
        await details.locator('.details-title', { hasText: 'bench-0002' }).waitFor();
        await shot(page, `axe-run-details-${theme.includes('Light') ? 'light' : 'dark'}`);
        await assertAccessible(await visibleWebviewFrame(page), `Run Details (${theme})`);
        await assertIconsDrawn(await visibleWebviewFrame(page), `Run Details (${theme})`);

        // Focus going back to the webview between the two picks can close the second one: leave it first.
        await palette(page, 'View: Close All Editors');
        await palette(page, 'Eval Runner: Compare Runs', { pick: ['command: tr a-z A-Z', `command: ${FAILING}`] });
        const compare = visibleWebview(page);
        await compare.locator('.stats', { hasText: `of ${TRACES} answers differ.` }).waitFor({ timeout: 30_000 });
        await compare.getByRole('grid').focus();
        await page.keyboard.press('ArrowDown');
        await compare.locator('.row.active').waitFor();
        await shot(page, `axe-compare-${theme.includes('Light') ? 'light' : 'dark'}`);
        await assertAccessible(await visibleWebviewFrame(page), `Compare Runs (${theme})`);
      } finally {
        await sandbox.close();
      }
    });
  }

  it('the HTML report (two runs, failed traces, a selected row with its full text), light and dark', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'eval-runner-axe-report-'));
    const out = join(dir, 'report.html');
    const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', dir];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token };
    const browser = await launchBrowser(mkdtempSync(join(tmpdir(), 'eval-runner-axe-profile-')), { colorScheme: 'light' });
    try {
      assert.equal((await cli(['run', ...svc, '--target', 'command', '--command', 'tr a-z A-Z'], env)).code, 0);
      assert.notEqual((await cli(['run', ...svc, '--target', 'command', '--command', FAILING, '--fresh'], env)).code, 0, 'two traces failed');
      assert.equal((await cli(['report', ...svc, '--out', out])).code, 0);
      const page = await browser.newPage();
      await page.goto(pathToFileURL(out).href);
      await page.locator('body[data-rendered="true"]').waitFor();
      await page.locator('.traces .row.state-failed').first().click();
      await page.locator('.details .details-title').waitFor();
      await page.locator('.traces .row.active').waitFor();
      const light = await seriousViolations(page);
      await page.emulateMedia({ colorScheme: 'dark' });
      const dark = await seriousViolations(page);
      assert.deepEqual({ light, dark }, { light: [], dark: [] }, `axe-core: serious or critical violations in the report:\n${[...light, ...dark].join('\n')}`);
    } finally {
      await browser.close();
      await sandbox.close();
    }
  });
});
