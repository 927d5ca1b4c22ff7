// The HTML report (eval-runner report) opened in Chromium as a reviewer would open the file: nothing leaves it,
// nothing fails in its console, every trace of a tricky set is there, and its figures are status --json's.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, launchBrowser } from '../harness/workbench.mjs';
import { RESULTS } from './workbenchPage.mjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));
const { seedPrompts } = require(join(ROOT, 'out', 'src', 'sandbox', 'seed.js'));

// The tests' one way to run the CLI, as compiled by the typecheck step.
const { cli } = require(join(ROOT, 'out', 'test', 'unit', 'helpers', 'cli.js'));

describe('the HTML report in Chromium (eval-runner report)', function () {
  this.timeout(120_000);

  it('makes no request outside the file, logs no error, shows every trace id, and its figures equal status --json', async () => {
    const TRACES = 25;
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'eval-runner-report-'));
    const out = join(dir, 'report.html');
    const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', dir];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token };
    const browser = await launchBrowser(mkdtempSync(join(tmpdir(), 'eval-runner-report-profile-')), { viewport: { width: 1400, height: 2400 }, colorScheme: 'light' });
    try {
      // Two runs, so the report compares them: the sandbox's OpenAI-compatible model (latency, tokens), then a command.
      assert.equal((await cli(['run', ...svc, '--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'sandbox-echo'], env)).code, 0);
      assert.equal((await cli(['run', ...svc, '--target', 'command', '--command', 'tr a-z A-Z', '--fresh'], env)).code, 0);
      const wrote = await cli(['report', ...svc, '--out', out]);
      assert.equal(wrote.code, 0, wrote.stderr);
      assert.equal(statSync(out).mode & 0o077, 0, 'owner-only, like exports');
      const status = JSON.parse((await cli(['status', ...svc, '--json'])).stdout);

      const page = await browser.newPage();
      const requests = [];
      const problems = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      page.on('pageerror', (e) => problems.push(e.message));
      const url = pathToFileURL(out).href;
      await page.goto(url);
      await page.locator('body[data-rendered="true"]').waitFor();
      assert.deepEqual(requests, [url], 'the file itself and nothing else');
      assert.deepEqual(problems, []);

      // Every trace id, as text, in the table (a tall page shows all 25 rows).
      const shown = await page.locator('.traces .row[data-key]').evaluateAll((rows) => rows.map((r) => r.dataset.key));
      assert.deepEqual([...shown].sort(), seedPrompts('benchmark', TRACES).map((p) => p.traceId).sort());
      const ids = await page.locator('.traces .c-id').allTextContents();
      for (const p of seedPrompts('benchmark', TRACES)) assert.ok(ids.includes(p.traceId), `${JSON.stringify(p.traceId)} shown as text`);

      // The figures are status --json's.
      assert.match(await page.locator('.summary-counts').innerText(), new RegExp(`^${TRACES} traces · .*Submitted ${status.counts.submitted}`));
      for (const run of status.runs) {
        const figures = await page.locator(`.run[data-run="${run.runId}"] .run-figures`).innerText();
        assert.ok(figures.startsWith(`${run.answered} answered · ${run.submitted} submitted · ${run.failed} failed`), figures);
        if (run.latencyMs) assert.ok(figures.includes(`latency p50 ${run.latencyMs.p50} ms · p95 ${run.latencyMs.p95} ms · max ${run.latencyMs.max} ms`), figures);
        if (run.tokens) assert.ok(figures.includes(`tokens ${run.tokens.prompt.toLocaleString('en-US')} prompt + ${run.tokens.completion.toLocaleString('en-US')} completion`), figures);
      }
      assert.equal(await page.locator('.run svg.chart').count(), 2 * status.runs.length, 'a histogram and a timeline per run');
      assert.equal(await page.locator('table.comparison th').count() > status.runs.length, true);

      // Search narrows the table; the full text of a row on demand.
      const target = seedPrompts('benchmark', TRACES)[3].traceId;
      await page.locator('input.search').fill(target);
      await page.locator('.shown', { hasText: `1 of ${TRACES} traces` }).waitFor();
      await page.locator(`.traces .row[data-key="${target.replace(/["\\]/g, '\\$&')}"]`).click();
      await page.locator('.details .details-title', { hasText: target }).waitFor();
      await page.locator('input.search').fill('');
      mkdirSync(join(RESULTS, 'screenshots'), { recursive: true });
      await page.setViewportSize({ width: 1400, height: 1000 });
      await page.screenshot({ path: join(RESULTS, 'screenshots', 'report-light.png') });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(RESULTS, 'screenshots', 'report-dark.png') });
    } finally {
      await browser.close();
      await sandbox.close();
    }
  });
});
