import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from '../harness/workbench.mjs';
import { RESULTS, inputBox, notification, openView, openWorkbench, palette, quickPick, shot, treeRow, visibleWebview } from './workbenchPage.mjs';

// The sandbox as compiled by the typecheck step (out/), as workbench.test.mjs loads it.
const require = createRequire(import.meta.url);
const { startSandbox } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));

describe('The first hour: the sandbox keeps its history, Add Evaluation asks for the service', function () {
  this.timeout(180_000);
  let wb;

  afterEach(async function () {
    if (wb && this.currentTest?.state === 'failed') {
      const name = this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
      const dir = join(RESULTS, 'failures');
      mkdirSync(dir, { recursive: true });
      await wb.page.screenshot({ path: join(dir, `${name}.png`) }).catch(() => undefined);
      writeFileSync(join(dir, `${name}.log`), wb.extensionLog());
      console.log(wb.extensionLog().split('\n').slice(-30).join('\n'));
    }
    await wb?.close();
    wb = undefined;
  });

  it('Try the Local Sandbox, two runs, Compare Runs, Developer: Reload Window: the evaluations, their history and Compare are still there', async () => {
    wb = await openWorkbench();
    const { page } = wb;
    const view = await openView(page);
    await view.locator('a.monaco-button', { hasText: 'Try the Local Sandbox' }).click();
    await treeRow(page, 'Sandbox benchmark 1').waitFor();
    await notification(page, 'Local sandbox running');
    await palette(page, 'Notifications: Clear All Notifications');
    await palette(page, 'Eval Runner: Run Evaluation', { pick: 'Sandbox benchmark 1' });
    await notification(page, 'Sandbox benchmark 1: 25/25 submitted', 60_000);
    // A second run with another target, then the two compared.
    await palette(page, 'Eval Runner: Select Target', { pick: 'Shell command' });
    await inputBox(page, 'Shell command', 'tr a-z A-Z');
    await notification(page, 'Target: Shell command');
    await palette(page, 'Notifications: Clear All Notifications');
    await palette(page, 'Eval Runner: Run Evaluation', { pick: 'Sandbox benchmark 1' });
    await page.locator('.monaco-dialog-box a.monaco-button', { hasText: 'Start Fresh' }).click();
    await notification(page, 'Sandbox benchmark 1: 25/25 submitted (25 in this run)', 60_000);
    await palette(page, 'Eval Runner: Compare Runs', { pick: ['Sandbox benchmark 1', 'echo', 'command: tr a-z A-Z'] });
    const compare = visibleWebview(page);
    await compare.locator('.stats', { hasText: 'answers differ' }).waitFor({ timeout: 30_000 });
    const comparedRuns = await compare.locator('.subtitle').innerText();
    const stats = await compare.locator('.stats').innerText();

    // Reload as a user does (an orderly shutdown that stores the editors and each page's state first).
    await page.waitForTimeout(500);
    await palette(page, 'Developer: Reload Window');
    await page.locator('.tabs-container .tab', { hasText: 'Compare: Sandbox benchmark 1' }).waitFor({ timeout: 60_000 });
    const restored = visibleWebview(page);
    await restored.locator('.stats', { hasText: 'answers differ' }).waitFor({ timeout: 60_000 });
    assert.equal(await restored.locator('.subtitle').innerText(), comparedRuns, 'the same two runs');
    assert.equal(await restored.locator('.stats').innerText(), stats);
    assert.equal(await restored.getByText('no longer configured').count(), 0);
    await openView(page);
    await treeRow(page, 'Sandbox benchmark 1').waitFor({ timeout: 30_000 });
    await treeRow(page, 'Sandbox robustness 2').waitFor();
    await treeRow(page, '25/25 submitted').waitFor({ timeout: 30_000 });
    await shot(page, 'sandbox-after-reload');

    // The sandbox listens again and knows its token: a run goes without a question.
    await palette(page, 'Notifications: Clear All Notifications');
    await palette(page, 'Eval Runner: Run Evaluation', { pick: 'Sandbox robustness 2' });
    await notification(page, 'Sandbox robustness 2: 20/20 submitted', 90_000);
    assert.equal(await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Token' }).count(), 0, 'no token asked for');
    // One history: one folder for the sandbox in the state folder, whatever its port.
    const folders = readdirSync(join(wb.runDir, 'xdg-state', 'eval-runner'));
    assert.deepEqual(folders.filter((f) => f.startsWith('sandbox-')).length, 1, folders.join(', '));
    assert.deepEqual(folders.filter((f) => f.startsWith('127.0.0.1')), [], folders.join(', '));
  });

  it('Add Evaluation asks for the base URL (the known one first), the token, the evaluation; Escape writes nothing', async () => {
    const sandbox = await startSandbox({ port: 0, evaluationSeconds: 0 });
    try {
      wb = await openWorkbench({ settings: { 'evalRunner.baseUrl': 'https://evals.example.com' } });
      const { page } = wb;
      await openView(page);

      // Escape at the token: nothing written, the sidebar still empty.
      await palette(page, 'Eval Runner: Add Evaluation');
      await page.locator('.quick-input-widget .quick-input-title', { hasText: "the service's base URL" }).waitFor();
      const rows = page.locator('.quick-input-widget .monaco-list-row');
      assert.match(await rows.nth(0).innerText(), /https:\/\/evals\.example\.com/, 'the known base URL first');
      await quickPick(page, 'Enter a URL');
      await inputBox(page, "the service's base URL", sandbox.baseUrl);
      await page.locator('.quick-input-widget .quick-input-title', { hasText: 'token for' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByText('No evaluations yet.').waitFor();

      await palette(page, 'Eval Runner: Add Evaluation');
      await quickPick(page, 'Enter a URL');
      await inputBox(page, "the service's base URL", sandbox.baseUrl);
      await inputBox(page, 'token for', sandbox.token, { password: true });
      await inputBox(page, 'evaluation id', '1');
      await quickPick(page, 'Benchmark');
      await inputBox(page, 'label', 'Added bench');
      await quickPick(page, 'User settings');
      await notification(page, 'Added benchmark evaluation 1');
      await treeRow(page, 'Added bench').waitFor();
      await shot(page, 'add-evaluation');

      // The base URL and the token were taken: the run asks nothing.
      await palette(page, 'Notifications: Clear All Notifications');
      await palette(page, 'Eval Runner: Run Evaluation');
      await notification(page, 'Added bench: 25/25 submitted', 60_000);
      assert.equal(sandbox.summary(1).submissions, 25);
    } finally {
      await sandbox.close();
    }
  });
});
