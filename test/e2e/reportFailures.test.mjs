// The HTML report of runs with failed traces, in Chromium: the failures are red on the timeline, a failed trace's
// full text is its error (not "(no answer)"), and runs side by side put the latest first.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, launchBrowser } from '../harness/workbench.mjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));

// The tests' one way to run the CLI, as compiled by the typecheck step.
const { cli } = require(join(ROOT, 'out', 'test', 'unit', 'helpers', 'cli.js'));

describe('the HTML report of runs with failed traces (eval-runner report)', function () {
  this.timeout(120_000);

  it('failed traces are red on the timeline, a failed trace shows its error, the latest run comes first side by side', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 12, evaluationSeconds: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'eval-runner-report-failures-'));
    const out = join(dir, 'report.html');
    const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', dir];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token };
    writeFileSync(
      join(dir, 'model.py'),
      `def check(trace):\n    if trace in ('bench-0002', 'bench-0005'):\n        raise ValueError('cannot answer ' + trace)\n\ndef answer(prompt, context):\n    check(context['traceId'])\n    return prompt.upper()\n`,
    );
    const browser = await launchBrowser(mkdtempSync(join(tmpdir(), 'eval-runner-report-profile-')), { viewport: { width: 1400, height: 2400 }, colorScheme: 'light' });
    try {
      assert.equal((await cli(['run', ...svc, '--target', 'command', '--command', 'tr a-z A-Z'], env)).code, 0);
      const failing = await cli(['run', ...svc, '--target', 'python', '--python-file', join(dir, 'model.py'), '--fresh'], env);
      assert.notEqual(failing.code, 0, 'two traces failed');
      assert.equal((await cli(['report', ...svc, '--out', out])).code, 0);
      const status = JSON.parse((await cli(['status', ...svc, '--json'])).stdout);
      const [first, latest] = status.runs.map((r) => r.runId);

      const page = await browser.newPage();
      await page.goto(pathToFileURL(out).href);
      await page.locator('body[data-rendered="true"]').waitFor();

      const heads = await page.locator('table.comparison tr').first().locator('th').allTextContents();
      assert.ok(heads[1].startsWith(latest) && heads[2].startsWith(first), `the latest run first: ${heads.join(' | ')}`);
      assert.ok((await page.locator(`.run[data-run="${latest}"] rect.chart-bar-error`).count()) > 0, 'the failures are red on the timeline');
      assert.equal(await page.locator(`.run[data-run="${first}"] rect.chart-bar-error`).count(), 0, 'no red in a run without errors');

      await page.locator('.traces .row[data-key="bench-0005"]').click();
      await page.locator('.details .details-title', { hasText: 'bench-0005' }).waitFor();
      const details = await page.locator('.details').innerText();
      assert.ok(!details.includes('(no answer)'), details);
      assert.match(details, /Error\s+The Python function model\.py:answer raised: ValueError: cannot answer bench-0005\nTraceback \(most recent call last\):\n {2}File ".*model\.py", line \d+, in answer/);
    } finally {
      await browser.close();
      await sandbox.close();
    }
  });
});
