// 9. The HTML report of 100,000 traces: how long `report` takes, how large the file is, and its first render in
// Chromium (from navigation start to the page's own mark once everything is drawn).
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { launchBrowser } from '../../test/harness/workbench.mjs';
import { editorReady } from './editor.mjs';
import { CLI, cliRun, median, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

export const names = ['report'];

export async function measure() {
  const figures = {};
  say('9. report: eval-runner report of 100,000 traces; size, time to write, first render in Chromium');
  if (!editorReady()) throw new Error('the editor set-up (Chromium) failed');
  const sb = await sandboxProcess(['--benchmark-traces', '100000']);
  try {
    const stateDir = tempDir();
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]), env);
    const out = join(tempDir(), 'report.html');
    const writes = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, 'report', '--base-url', sb.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir, '--out', out], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`report failed: ${r.stderr}`);
      writes.push(performance.now() - t0);
    }
    const renders = [];
    for (let i = 0; i < 3; i++) {
      const browser = await launchBrowser(tempDir('eval-runner-bench-report-'));
      try {
        const page = await browser.newPage();
        await page.goto(`file://${out}`);
        await page.locator('body[data-rendered="true"]').waitFor({ timeout: 120_000 });
        renders.push(await page.evaluate(() => performance.getEntriesByName('evalRunner:reportRendered')[0].startTime));
      } finally {
        await browser.close();
      }
    }
    figures.report = { traces: 100_000, bytes: statSync(out).size, writeMs: median(writes), writeRunsMs: writes.map(Math.round), firstRenderMs: median(renders), firstRenderRunsMs: renders.map(Math.round) };
  } finally {
    await sb.stop();
  }
  return figures;
}
