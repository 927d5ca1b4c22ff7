// The real workbench, as a user meets it: code-server with the packaged VSIX installed, a fresh profile,
// headless Chromium. Selectors are those recorded in ../shared/notes/real-editor-testing.md.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createRequire } from 'node:module';
import { CODE_SERVER_BIN, ROOT, launchBrowser, startCodeServer, workbenchUrl } from '../harness/workbench.mjs';

// Compiled by the typecheck step (out/); a computed path, so tsconfig.mjs.json checks this file and not out/.
const { filesUnder } = createRequire(import.meta.url)(join(ROOT, 'out', 'test', 'unit', 'helpers', 'secrets.js'));

export const RESULTS = join(ROOT, 'test-results', 'e2e');
export const VSIX = join(ROOT, 'eval-runner.vsix');
let installedExtensions;

/** Installs the VSIX once per suite; every scenario gets its own copy of the extensions folder. */
function extensionsTemplate() {
  if (installedExtensions) return installedExtensions;
  if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run npm run package`);
  const dir = mkdtempSync(join(tmpdir(), 'eval-runner-vsix-'));
  const ext = join(dir, 'extensions');
  const r = spawnSync(process.execPath, [CODE_SERVER_BIN, '--config', '/dev/null', '--user-data-dir', join(dir, 'ud'), '--extensions-dir', ext, '--install-extension', VSIX], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'xdg'), XDG_DATA_HOME: join(dir, 'xdg'), TMPDIR: dir },
  });
  if (r.status !== 0 || !readdirSync(ext).some((d) => d.startsWith('eval-runner.eval-runner-'))) {
    throw new Error(`installing the VSIX failed: ${r.stdout}${r.stderr}`);
  }
  installedExtensions = ext;
  return ext;
}

/**
 * code-server with the VSIX installed, a fresh profile and an empty folder, opened in headless Chromium.
 * @param {{ theme?: string, settings?: Record<string, unknown>, serverArgs?: string[] }} [options]
 */
export async function openWorkbench({ theme = 'Default Dark Modern', settings = {}, serverArgs = [] } = {}) {
  const runDir = mkdtempSync(join(tmpdir(), 'eval-runner-e2e-'));
  const extensionsDir = join(runDir, 'extensions');
  cpSync(extensionsTemplate(), extensionsDir, { recursive: true });
  const folder = join(runDir, 'workspace');
  mkdirSync(folder, { recursive: true });
  const serverOutput = [];
  const server = await startCodeServer({
    runDir,
    extensionsDir,
    settings: { 'workbench.colorTheme': theme, ...settings },
    args: serverArgs,
    log: (text) => serverOutput.push(text),
  });
  const browser = await launchBrowser(join(runDir, 'chromium'), { colorScheme: theme.includes('Light') ? 'light' : 'dark' });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(workbenchUrl(server, folder));
  await page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: 30_000 });
  // The extension's contributions (its activity-bar entry, its palette commands) arrive with the remote
  // extension host, a moment after the workbench itself.
  await page.locator('.activitybar .action-item a[aria-label^="Eval Runner"]').waitFor({ timeout: 30_000 });
  return {
    page,
    server,
    dialogs,
    runDir,
    /** What code-server printed on stdout and stderr. */
    serverOutput,
    async close() {
      await browser.close().catch(() => undefined);
      await server.stop();
    },
    /** The extension's own log (its LogOutputChannel), for failures. */
    extensionLog() {
      const found = filesUnder(runDir)
        .filter((p) => basename(p).includes('Eval Runner') && statSync(p).size > 0)
        .map((p) => readFileSync(p, 'utf8'));
      return found.join('\n') || '(no extension log found)';
    },
  };
}

export async function shot(page, name) {
  mkdirSync(join(RESULTS, 'screenshots'), { recursive: true });
  const path = join(RESULTS, 'screenshots', `${name}.png`);
  await page.screenshot({ path });
  return path;
}

export async function openView(page) {
  const view = page.locator('[id="workbench.view.extension.evalRunner"]');
  // The activity bar entry toggles: click only when the view is not already showing.
  if (!(await view.isVisible())) await page.locator('.activitybar .action-item a[aria-label^="Eval Runner"]').click();
  await view.waitFor();
  return view;
}

/**
 * A command run from the palette, as a user types it; `pick` then chooses the quick pick's row with that text, or
 * each of several quick picks in turn (Compare Runs: the evaluation, then two runs).
 * @param {import('playwright-core').Page} page
 * @param {string} title
 * @param {{ pick?: string | string[] }} [options]
 */
export async function palette(page, title, { pick } = {}) {
  const picks = pick === undefined ? [] : [pick].flat();
  // The workbench closes the quick input when something else takes focus (a view revealed as it first renders, a
  // run's last toast): then the user runs the command again, from its first pick. Only a closed quick input is tried
  // again, and at most twice.
  for (let attempt = 1; ; attempt++) {
    const timeout = attempt < 3 ? 10_000 : 30_000;
    try {
      await page.keyboard.press('F1');
      await page.locator('.quick-input-widget input.input').fill(`>${title}`, { timeout });
      // Click the matching row: Enter would run whichever row has focus, and recently used commands are listed
      // (and focused) first until the filter settles.
      await quickRow(page, title).click({ timeout });
      for (const text of picks) await quickRow(page, text).click({ timeout });
      return;
    } catch (error) {
      if (attempt >= 3 || (await page.locator('.quick-input-widget').isVisible())) throw error;
    }
  }
}

/** Fills the input box whose title contains titleText, once it shows (input boxes follow one another). */
export async function inputBox(page, titleText, value, { password = false } = {}) {
  await page.locator('.quick-input-widget .quick-input-title', { hasText: titleText }).waitFor();
  const box = page.locator('.quick-input-widget input.input');
  if (password) assert.equal(await box.getAttribute('type'), 'password', `${titleText} is a password box`);
  await box.fill(value);
  await page.keyboard.press('Enter');
}

/**
 * The quick input's visible row with this text. The widget can hold a list it showed before, hidden: a row found there
 * first was waited for until the time-out (Compare Runs' second quick pick, after the accessibility tests).
 * @param {import('playwright-core').Page} page
 * @param {string} text
 */
function quickRow(page, text) {
  return page.locator('.quick-input-widget .monaco-list-row:visible', { hasText: text }).first();
}

export async function quickPick(page, text) {
  const row = quickRow(page, text);
  await row.waitFor();
  await row.click();
}

/**
 * A notification with this text: in the toasts, or else in the notification centre (a toast can hide before
 * a test looks; the centre keeps every notification). Resolves to the list item, ready for its buttons.
 */
export async function notification(page, text, timeout = 30_000) {
  const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: text }).first();
  const centre = page.locator('.notifications-center .notification-list-item', { hasText: text }).first();
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (await toast.isVisible()) return toast;
    if (await centre.isVisible()) return centre;
    await page.waitForTimeout(250);
    if (Date.now() > deadline - timeout / 2 && !(await page.locator('.notifications-center.visible').isVisible())) {
      await page.locator('.statusbar-item[id="status.notifications"] a, .statusbar-item.notifications-center-toggle a').first().click().catch(() => undefined);
    }
  }
  throw new Error(`no notification with "${text}" within ${timeout} ms`);
}

export function treeRow(page, text) {
  return page.locator('[id="workbench.view.extension.evalRunner"] .monaco-list-row', { hasText: text }).first();
}

export function webview(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

/** The webview on screen, when other webview panels sit in tabs behind it. */
export function visibleWebview(page) {
  return page.locator('iframe.webview.ready:visible').first().contentFrame().frameLocator('iframe#active-frame');
}

/**
 * Searches Run Details for `text` from inside its page and waits there until `shown` says the rows came (a locator
 * would read the layout itself): the layout properties the page's script read meanwhile, but for a scroll's own
 * handler, which the browser calls with the layout done (the search's fewer rows move the scroll). The getters are
 * patched for this search only, and put back when it ends either way; after `timeout` ms without the rows it
 * rejects with the reads recorded so far.
 * @param {import('playwright-core').Frame | null} frame the page's (visibleWebviewFrame)
 * @param {string} text
 * @param {string} shown
 * @returns {Promise<string[]>}
 */
export async function layoutReadsWhile(frame, text, shown, timeout = 15_000) {
  if (!frame) throw new Error('no webview frame to search in');
  return frame.evaluate(
    ([text, shown, timeout]) =>
      new Promise((resolve, reject) => {
        /** @type {string[]} */
        const reads = [];
        let scrolling = false;
        const scrolled = () => {
          scrolling = true;
          setTimeout(() => (scrolling = false));
        };
        window.addEventListener('scroll', scrolled, true);
        /** @type {[object, string, PropertyDescriptor][]} */
        const patched = [];
        /** @type {[object, string][]} */
        const getters = [[Element.prototype, 'clientHeight'], [Element.prototype, 'clientWidth'], [Element.prototype, 'scrollTop'], [HTMLElement.prototype, 'offsetHeight'], [HTMLElement.prototype, 'offsetWidth']];
        for (const [proto, name] of getters) {
          const d = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(proto, name));
          patched.push([proto, name, d]);
          Object.defineProperty(proto, name, { ...d, get() { if (!scrolling) reads.push(name); return d.get?.call(this); } });
        }
        const observer = new MutationObserver(() => {
          if (document.querySelector('.shown')?.textContent === shown && document.querySelector('.row[data-key]')) finish(() => resolve(reads));
        });
        const timer = setTimeout(() => finish(() => reject(new Error(`no "${shown}" after ${timeout} ms; layout reads so far: ${JSON.stringify(reads)}`))), timeout);
        /** @param {() => void} settle */
        function finish(settle) {
          clearTimeout(timer);
          observer.disconnect();
          window.removeEventListener('scroll', scrolled, true);
          for (const [proto, name, d] of patched) Object.defineProperty(proto, name, d);
          settle();
        }
        observer.observe(document.body, { subtree: true, childList: true, characterData: true });
        const search = /** @type {HTMLInputElement} */ (document.querySelector('input.search'));
        search.value = text;
        search.dispatchEvent(new Event('input'));
      }),
    /** @type {[string, string, number]} */ ([text, shown, timeout]),
  );
}
