// The editor rows' shared steps: the editor set-up, the packaged VSIX, and what a user does in the workbench.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './processes.mjs';

/** The VSIX the workbench installs (npm run package), built from this tree. */
export function packageVsix() {
  const pack = spawnSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`packaging failed: ${pack.stdout}${pack.stderr}`);
}

export function editorReady() {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'setupEditor.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return /editor-setup: ready/.test(r.stdout ?? '');
}

/** Eval Runner: Set Token in the workbench, as a user types it. */
export async function setToken(page, token) {
  const { palette, notification } = await import('../../test/e2e/workbenchPage.mjs');
  await palette(page, 'Eval Runner: Set Token');
  await page.locator('.quick-input-widget input[type="password"]').fill(token);
  await page.keyboard.press('Enter');
  await notification(page, 'saved in secret storage');
}

export async function pickIfAsked(page, text) {
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
  if (await row.waitFor({ timeout: 2_000 }).then(() => true, () => false)) await row.click();
}

export async function waitForFrame(page, test, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const f of page.frames()) if (await test(f).catch(() => false)) return f;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the webview never painted its rows');
}

export async function measureAfter(frame, name, action, timeoutMs = 10_000) {
  const before = await frame.evaluate((n) => performance.getEntriesByName(n).length, name);
  await action();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = await frame.evaluate((n) => {
      const all = performance.getEntriesByName(n);
      const last = /** @type {PerformanceMeasure | undefined} */ (all[all.length - 1]);
      return { count: all.length, ms: last?.duration, shown: last?.detail?.shown };
    }, name);
    if (m.count > before) return { ms: m.ms, shown: m.shown };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no ${name} measure`);
}
