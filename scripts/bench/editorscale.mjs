// 10b. The editor at 100,000 traces × 2 KB (issue 28): two runs journaled by the CLI (echo, then a Python function
// that answers in capitals, so every answer differs), then in code-server: the extension host's RSS before and after
// Run Details opens the evaluation, a verdict given with G / B in Run Details until the journal has it and the row
// shows it, and Compare Runs from asking (the second run picked) until the page has painted its first rows.
import { statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { editorReady, packageVsix, pickIfAsked, setToken, waitForFrame } from './editor.mjs';
import { extensionHostsOf, holdsOpen, rssOf } from './procfs.mjs';
import { cliRun, findFiles, median, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

export const names = ['editorscale'];

export async function measure() {
  const figures = {};
  say('10b. editorscale: 100,000 traces × 2 KB in the editor (extension host RSS, a verdict, Compare Runs)');
  if (!editorReady()) throw new Error('the editor set-up failed');
  packageVsix();
  const sb = await sandboxProcess(['--benchmark-traces', '100000', '--prompt-bytes', '2048']);
  try {
    const stateDir = tempDir();
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    const echo = await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]), env);
    const model = join(tempDir(), 'upper.py');
    writeFileSync(model, 'def answer(prompt):\n    return prompt.upper()\n');
    const upper = await cliRun(runArgs(sb, ['--target', 'python', '--python-file', model, '--concurrency', '64', '--fresh', '--state-dir', stateDir]), env);
    for (const r of [echo, upper]) if (r.summary.submittedNow !== 100_000) throw new Error(`an editorscale run submitted ${r.summary.submittedNow}`);
    const journal = findFiles(stateDir, '.jsonl').sort((x, y) => statSync(y).size - statSync(x).size)[0];
    say(`  journal ${(statSync(journal).size / 2 ** 20).toFixed(0)} MiB (two runs of 100,000 × 2 KB)`);
    figures.editorScale = { traces: 100_000, promptBytes: 2048, journalBytes: statSync(journal).size, ...(await editorScale(sb, stateDir, journal)) };
  } finally {
    await sb.stop();
  }
  return figures;
}

async function editorScale(sb, stateDir, journal) {
  const { openWorkbench, palette, quickPick } = await import('../../test/e2e/workbenchPage.mjs');
  const wb = await openWorkbench({
    settings: {
      'evalRunner.baseUrl': sb.baseUrl,
      'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Bench 2k' }],
      'evalRunner.target': { type: 'echo' },
      'evalRunner.stateDir': stateDir,
    },
  });
  try {
    const { page } = wb;
    await setToken(page, sb.token);
    // The extension is active (Set Token ran in it) and nothing has opened the evaluation yet. code-server may run
    // more than one extension host: each is read now, and ours is the one that holds the journal open afterwards.
    await new Promise((r) => setTimeout(r, 3000));
    const hostsBefore = new Map(extensionHostsOf(wb.server.runDir).map((pid) => [pid, rssOf(pid)]));
    const t0 = performance.now();
    await palette(page, 'Eval Runner: Show Run Details');
    await pickIfAsked(page, 'Bench 2k');
    const frame = await waitForFrame(page, (f) => f.evaluate(() => performance.getEntriesByName('evalRunner:painted').length > 0), 120_000);
    const openMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 3000));
    const host = [...hostsBefore.keys()].find((pid) => holdsOpen(pid, journal));
    const before = host === undefined ? undefined : hostsBefore.get(host);
    if (host === undefined || !before) throw new Error(`none of the extension hosts ${[...hostsBefore.keys()].join(', ')} holds the journal open`);
    const opened = rssOf(host);
    const verdicts = await verdictTimes(page, frame, journal);
    const compare = await compareTimes(page, { palette, quickPick });
    const after = rssOf(host);
    return { hostPid: host, extensionHosts: hostsBefore.size, rssBeforeMB: before.rssMB, rssOpenedMB: opened.rssMB, rssAddedMB: opened.rssMB - before.rssMB, peakOpenedMB: opened.peakMB, rssAfterCompareMB: after.rssMB, peakAfterCompareMB: after.peakMB, openToPaintMs: openMs, ...verdicts, ...compare };
  } finally {
    await wb.close();
  }
}

/** The page's record of the verdict keys pressed and the verdicts shown, at their times (verdictTimes). */
/** @typedef {{ benchVerdicts: { keys: number[], shown: { at: number, verdict: string }[] } }} BenchWindow */

/**
 * G and B in turn on Run Details' first row, five times: from the key (its keydown in the page) to the journal's
 * growth (an inotify watch here) and to the row's new verdict class (a MutationObserver in the page). The page's
 * times are its performance.timeOrigin + now(), this process's Date.now(): the same clock.
 */
async function verdictTimes(page, frame, journal) {
  /** @type {number[]} */
  const grows = [];
  const watcher = watch(journal, () => grows.push(Date.now()));
  try {
    await frame.evaluate(() => {
      const at = () => performance.timeOrigin + performance.now();
      const page = /** @type {BenchWindow} */ (/** @type {unknown} */ (window));
      page.benchVerdicts = { keys: [], shown: [] };
      document.addEventListener('keydown', (e) => (e.key === 'g' || e.key === 'b') && page.benchVerdicts.keys.push(at()), true);
      let last = '';
      new MutationObserver(() => {
        const row = document.querySelector('.row.active');
        const now = row?.classList.contains('verdict-good') ? 'good' : row?.classList.contains('verdict-bad') ? 'bad' : '';
        if (now !== last) {
          last = now;
          page.benchVerdicts.shown.push({ at: at(), verdict: now });
        }
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['class'] });
    });
    await frame.locator('[role="grid"]').focus();
    await page.keyboard.press('ArrowDown');
    await frame.locator('.row.active').waitFor();
    const journaledMs = [];
    const shownMs = [];
    for (let i = 0; i < 6; i++) {
      const key = i % 2 ? 'b' : 'g';
      const want = key === 'g' ? 'good' : 'bad';
      grows.length = 0;
      await page.keyboard.press(key);
      const deadline = Date.now() + 10_000;
      let seen;
      while (Date.now() < deadline) {
        seen = await frame.evaluate((w) => {
          const { keys, shown } = /** @type {BenchWindow} */ (/** @type {unknown} */ (window)).benchVerdicts;
          const key = /** @type {number} */ (keys.at(-1));
          return { key, shown: shown.find((s) => s.verdict === w && s.at >= key) };
        }, want);
        if (seen.shown && grows.length) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      if (!seen?.shown || !grows.length) throw new Error(`verdict ${i + 1}: ${seen?.shown ? '' : 'never shown'} ${grows.length ? '' : 'never journaled'}`);
      // The first is the session's first write (its journal opened); the figures are the next five.
      if (i > 0) {
        journaledMs.push(Math.round(grows[0] - seen.key));
        shownMs.push(Math.round(seen.shown.at - seen.key));
      }
      await new Promise((r) => setTimeout(r, 700));
    }
    return { verdictJournaledMs: median(journaledMs), verdictShownMs: median(shownMs), verdictJournaledRunsMs: journaledMs, verdictShownRunsMs: shownMs };
  } finally {
    watcher.close();
  }
}

/**
 * Compare Runs from the palette: when it offers the two runs (its first quick pick lists them), and from the second
 * run picked until the page has painted its first rows (its mark; the page's clock is this process's).
 */
async function compareTimes(page, { palette, quickPick }) {
  await palette(page, 'View: Close All Editors');
  // From the command's click (or the evaluation's, where it asks which) to the list of runs: not the palette's typing.
  await palette(page, 'Eval Runner: Compare Runs');
  let t0 = Date.now();
  const runRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'python' }).first();
  const evaluationRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Bench 2k' }).first();
  const first = await Promise.race([runRow.waitFor({ timeout: 60_000 }).then(() => 'runs'), evaluationRow.waitFor({ timeout: 60_000 }).then(() => 'evaluation')]);
  if (first === 'evaluation') {
    await evaluationRow.click();
    t0 = Date.now();
    await runRow.waitFor({ timeout: 60_000 });
  }
  const offeredMs = Date.now() - t0;
  await quickPick(page, 'python');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'echo' }).first();
  await row.waitFor();
  const asked = Date.now();
  await row.click();
  const frame = await waitForFrame(page, (f) => f.evaluate(() => performance.getEntriesByName('evalRunner:compareRows').length > 0), 120_000);
  const mark = await frame.evaluate(() => {
    const m = /** @type {PerformanceMark} */ (performance.getEntriesByName('evalRunner:compareRows')[0]);
    // The page's document is VS Code's fake.html, which the webview's service worker serves: how long its navigation
    // waited for that worker to start. code-server serves every webview from the one origin it is served from, so a new
    // webview's worker takes over from the last one's (or from code-server's own) before the page can load.
    // (A page's performance, which the checker types as Node's.)
    const nav = /** @type {{ workerStart: number } | undefined} */ (/** @type {any} */ (performance).getEntriesByType('navigation')[0]);
    return { at: performance.timeOrigin + m.startTime, ...m.detail, summary: document.querySelector('.stats')?.textContent, workerWaitMs: nav ? nav.workerStart : undefined };
  });
  return {
    compareOfferedMs: offeredMs,
    compareFirstRowsMs: Math.round(mark.at - asked),
    compareWorkerWaitMs: mark.workerWaitMs === undefined ? undefined : Math.round(mark.workerWaitMs),
    compareRows: mark.rows,
    compareLength: mark.length,
    compareTotal: mark.total,
    compareSummary: mark.summary,
  };
}
