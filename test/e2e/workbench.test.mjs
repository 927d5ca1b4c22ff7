import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS, notification, openView, openWorkbench, palette, quickPick, shot, treeRow, webview } from './workbenchPage.mjs';

describe('Eval Runner in the real workbench (code-server + Chromium, VSIX installed)', function () {
  this.timeout(120_000);
  let wb;

  afterEach(async function () {
    if (wb && this.currentTest?.state === 'failed') {
      const name = this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
      const dir = join(RESULTS, 'failures');
      mkdirSync(dir, { recursive: true });
      await wb.page.screenshot({ path: join(dir, `${name}.png`) }).catch(() => undefined);
      writeFileSync(join(dir, `${name}.log`), wb.extensionLog());
      console.log(`    failure screenshot and extension log in ${dir}/${name}.*`);
      console.log(wb.extensionLog().split('\n').slice(-30).join('\n'));
    }
    await wb?.close();
    wb = undefined;
  });

  it('activates: its view container shows the welcome content and its commands are in the palette', async () => {
    wb = await openWorkbench();
    const view = await openView(wb.page);
    await view.getByText('No evaluations yet.').waitFor();
    await view.locator('a.monaco-button', { hasText: 'Try the Local Sandbox' }).waitFor();
    await view.locator('a.monaco-button', { hasText: 'Add Evaluation' }).waitFor();
    await shot(wb.page, 'welcome');
    await wb.page.keyboard.press('F1');
    const input = wb.page.locator('.quick-input-widget input.input');
    for (const title of ['Eval Runner: Run Evaluation', 'Eval Runner: Set Token', 'Eval Runner: Try the Local Sandbox', 'Eval Runner: Export Results']) {
      await input.fill(`>${title}`);
      await wb.page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor();
    }
    await wb.page.keyboard.press('Escape');
  });

  it('one-click sandbox tour: both evaluations run, Process Details reaches 100%, a trace opens side by side', async () => {
    wb = await openWorkbench();
    const { page } = wb;
    const view = await openView(page);
    await view.locator('a.monaco-button', { hasText: 'Try the Local Sandbox' }).click();
    await treeRow(page, 'Sandbox benchmark 1').waitFor();
    await treeRow(page, 'Sandbox robustness 2').waitFor();
    const toast = await notification(page, 'Local sandbox running');
    await toast.locator('a.monaco-button', { hasText: 'Run Both' }).click();
    await treeRow(page, '25/25 submitted').waitFor({ timeout: 60_000 });
    await treeRow(page, '20/20 submitted').waitFor({ timeout: 60_000 });
    await treeRow(page, 'Sandbox benchmark 1').click();
    await treeRow(page, 'Submitted (25)').waitFor();
    await shot(page, 'tree');

    await palette(page, 'Eval Runner: Show Progress', { pick: 'Sandbox benchmark 1' });
    const frame = webview(page);
    await frame.getByText('100% submitted').waitFor();
    await frame.locator('.row.state-submitted').first().waitFor();
    assert.equal(await frame.locator('.chip.state-submitted .chip-count').textContent(), '25');
    await shot(page, 'webview-dark');

    await frame.locator('.row', { hasText: 'bench-0005' }).first().click();
    await page.locator('.tabs-container .tab', { hasText: 'prompt.txt' }).waitFor();
    await page.locator('.tabs-container .tab', { hasText: 'answer.txt' }).waitFor();
    assert.equal(await page.locator('.editor-group-container').count(), 2, 'prompt and answer side by side');
    await page.getByText('Line two').first().waitFor();
    await shot(page, 'review');
  });

  it('shows Process Details in the light theme too', async () => {
    wb = await openWorkbench({ theme: 'Default Light Modern' });
    const { page } = wb;
    await palette(page, 'Eval Runner: Try the Local Sandbox');
    await (await notification(page, 'Local sandbox running')).locator('a.monaco-button', { hasText: 'Run Both' }).click();
    await openView(page);
    await treeRow(page, '25/25 submitted').waitFor({ timeout: 60_000 });
    await treeRow(page, '20/20 submitted').waitFor({ timeout: 60_000 });
    await palette(page, 'Eval Runner: Show Progress', { pick: 'Sandbox benchmark 1' });
    await webview(page).getByText('100% submitted').waitFor();
    assert.match(await page.locator('.monaco-workbench').getAttribute('class'), /light_modern/);
    await shot(page, 'webview-light');
  });

  it('sets the token through its password box; a rejected token offers Set Token', async () => {
    wb = await openWorkbench();
    const { page } = wb;
    await palette(page, 'Eval Runner: Try the Local Sandbox');
    await notification(page, 'Local sandbox running');
    await palette(page, 'Eval Runner: Set Token');
    const box = page.locator('.quick-input-widget input.input');
    await box.waitFor();
    assert.equal(await box.getAttribute('type'), 'password');
    await box.fill('definitely-wrong-token');
    await page.keyboard.press('Enter');
    await notification(page, 'saved in secret storage');

    await palette(page, 'Eval Runner: Run Evaluation', { pick: 'Sandbox benchmark 1' });
    const error = await notification(page, 'rejected the personal access token');
    await shot(page, 'token-rejected');
    await error.locator('a.monaco-button', { hasText: 'Set Token' }).click();
    await page.locator('.quick-input-widget input[type="password"]').waitFor();
    await page.keyboard.press('Escape');
  });

  it('renders adversarial prompts as text in the webview and the review editors (XSS)', async () => {
    wb = await openWorkbench();
    const { page } = wb;
    await palette(page, 'Eval Runner: Try the Local Sandbox');
    await (await notification(page, 'Local sandbox running')).locator('a.monaco-button', { hasText: 'Run Both' }).click();
    await openView(page);
    await treeRow(page, '20/20 submitted').waitFor({ timeout: 60_000 });
    for (const [evaluation, payload] of [
      ['Sandbox benchmark 1', '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'],
      ['Sandbox robustness 2', '</textarea><script>alert("xss")</script>'],
      ['Sandbox robustness 2', '<a href="javascript:alert(1)">click to continue</a>'],
      ['Sandbox robustness 2', '<meta http-equiv="Content-Security-Policy" content="default-src *">'],
    ]) {
      await palette(page, 'Eval Runner: Show Progress', { pick: evaluation });
      const frame = webview(page);
      const cell = frame.locator('.c-prompt', { hasText: payload }).first();
      await cell.waitFor();
      assert.ok((await cell.textContent()).includes(payload), 'the markup shows literally');
    }
    await webview(page).locator('.c-prompt', { hasText: '</textarea>' }).first().click();
    await page.locator('.tabs-container .tab', { hasText: 'prompt.txt' }).waitFor();
    await page.locator('.view-lines', { hasText: 'alert("xss")' }).first().waitFor();
    for (const frame of page.frames()) {
      const pwned = await frame.evaluate(() => globalThis.__pwned).catch(() => undefined);
      assert.equal(pwned, undefined, `no payload ran in ${frame.url().slice(0, 80)}`);
    }
    assert.deepEqual(wb.dialogs, [], 'no dialog opened');
    await shot(page, 'xss-review');
  });
});
