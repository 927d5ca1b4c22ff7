import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { ROOT } from '../harness/workbench.mjs';
import { visibleWebviewFrame } from './axe.mjs';
import { RESULTS, inputBox, layoutReadsWhile, notification, openView, openWorkbench, palette, quickPick, shot, treeRow, visibleWebview, webview } from './workbenchPage.mjs';

// The sandbox and the secrets helpers as compiled by the typecheck step (out/), so scenarios can make the
// service misbehave. Required by a computed path, so tsconfig.mjs.json checks these files and not out/.
const require = createRequire(import.meta.url);
const { startSandbox } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));
const { credentialEchoes, filesUnder } = require(join(ROOT, 'out', 'test', 'unit', 'helpers', 'secrets.js'));
const { seedPrompts } = require(join(ROOT, 'out', 'src', 'sandbox', 'seed.js'));
const { wordCount } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));
const CLI = join(ROOT, 'dist', 'cli.js');

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

  it('one-click sandbox tour: both evaluations run, Run Details reaches 100%, a trace opens side by side', async () => {
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

    await palette(page, 'Eval Runner: Show Run Details', { pick: 'Sandbox benchmark 1' });
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

  it('shows Run Details in the light theme too', async () => {
    wb = await openWorkbench({ theme: 'Default Light Modern' });
    const { page } = wb;
    await palette(page, 'Eval Runner: Try the Local Sandbox');
    await (await notification(page, 'Local sandbox running')).locator('a.monaco-button', { hasText: 'Run Both' }).click();
    await openView(page);
    await treeRow(page, '25/25 submitted').waitFor({ timeout: 60_000 });
    await treeRow(page, '20/20 submitted').waitFor({ timeout: 60_000 });
    await palette(page, 'Eval Runner: Show Run Details', { pick: 'Sandbox benchmark 1' });
    await webview(page).getByText('100% submitted').waitFor();
    assert.match((await page.locator('.monaco-workbench').getAttribute('class')) ?? '', /light_modern/);
    await shot(page, 'webview-light');
  });

  it('sets the token through its password box; a rejected token offers Set Token', async () => {
    // A service of its own: the local sandbox sets its own token and asks for none.
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 5, evaluationSeconds: 0 });
    try {
      wb = await openWorkbench({
        settings: { 'evalRunner.baseUrl': sandbox.baseUrl, 'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Token bench' }] },
      });
      const { page } = wb;
      await palette(page, 'Eval Runner: Set Token');
      const box = page.locator('.quick-input-widget input.input');
      await box.waitFor();
      assert.equal(await box.getAttribute('type'), 'password');
      await box.fill('definitely-wrong-token');
      await page.keyboard.press('Enter');
      await notification(page, 'saved in secret storage');

      await palette(page, 'Eval Runner: Run Evaluation');
      const error = await notification(page, 'rejected the personal access token');
      await shot(page, 'token-rejected');
      await error.locator('a.monaco-button', { hasText: 'Set Token' }).click();
      await page.locator('.quick-input-widget input[type="password"]').waitFor();
      await page.keyboard.press('Escape');
    } finally {
      await sandbox.close();
    }
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
      await palette(page, 'Eval Runner: Show Run Details', { pick: evaluation });
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

  it('shows 45,000 traces in Run Details from the host: only the rows in view reach the page, the end by keyboard, searchable', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 45_000, evaluationSeconds: 0 });
    try {
      wb = await openWorkbench({
        settings: {
          'evalRunner.baseUrl': sandbox.baseUrl,
          'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Big bench' }],
        },
      });
      const { page } = wb;
      await palette(page, 'Eval Runner: Set Token');
      await inputBox(page, 'Token', sandbox.token, { password: true });
      await notification(page, 'saved in secret storage');
      await palette(page, 'Eval Runner: Fetch Prompts');
      await notification(page, '45000 prompts fetched', 60_000);
      await palette(page, 'Eval Runner: Show Run Details');
      const frame = webview(page);
      await frame.locator('.shown', { hasText: '45,000 of 45,000 traces' }).waitFor({ timeout: 30_000 });
      assert.equal(await frame.locator('.chip.state-pending .chip-count').textContent(), '45,000');
      await frame.locator('.row[data-key="bench-0000"]').waitFor();
      // The host holds the rows: the page draws those in view, whatever the table's length.
      const drawn = await frame.locator('.row[data-key]').count();
      assert.ok(drawn > 0 && drawn < 200, `${drawn} rows drawn`);
      // The last listed trace, reached by keyboard: its row comes from the host as the grid scrolls to it.
      const last = 'bench-44999';
      const grid = frame.locator('[role="grid"]');
      await grid.focus();
      await grid.press('End');
      await frame.locator(`.row.active[data-key="${last}"]`).waitFor({ timeout: 10_000 });
      assert.equal(await frame.locator('.row[data-key="bench-0000"]').count(), 0, 'the first rows left the DOM');
      // The host's answer is drawn without the page's script reading its layout: a read after the rows changed made
      // the browser lay the page out there and then, at each update of a run, and again in the frame.
      assert.deepEqual(await layoutReadsWhile(await visibleWebviewFrame(page), 'bench-44998', '1 of 45,000 traces'), []);
      await frame.locator('.row', { hasText: 'bench-44998' }).waitFor();
    } finally {
      await sandbox.close();
    }
  });

  it('keeps a recognisable token and model key out of the webview, the page, the logs and every file it writes', async () => {
    const TOKEN = 'pat-7Qz-SECRET-TOKEN-5d20af';
    const KEY = 'sk-proj-SECRET-KEY-c31e77';
    const FRAGMENTS = [TOKEN, KEY, 'SECRET-TOKEN', 'SECRET-KEY'];
    // Peers that quote the credentials back (see credentialEchoes). Those words reach the webview,
    // notifications and the log, so they must be redacted there.
    const peers = credentialEchoes(KEY);
    const sandbox = await startSandbox({ port: 0, token: TOKEN, benchmarkTraces: 12, evaluationSeconds: 0, intercept: peers.intercept });
    try {
      wb = await openWorkbench({
        settings: {
          'evalRunner.baseUrl': sandbox.baseUrl,
          'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Secret bench' }],
        },
        // Debug lines too, so the log searched is the most the extension ever writes.
        serverArgs: ['--log', 'trace'],
      });
      const { page } = wb;
      await palette(page, 'Eval Runner: Set Token');
      await inputBox(page, 'Token', TOKEN, { password: true });
      await notification(page, 'saved in secret storage');
      await palette(page, 'Eval Runner: Select Target', { pick: 'OpenAI-compatible endpoint' });
      await inputBox(page, '(1/3)', `${sandbox.baseUrl}/v1`);
      await inputBox(page, '(2/3)', 'echo');
      await inputBox(page, '(3/3)', KEY, { password: true });
      await notification(page, 'Target: OpenAI-compatible endpoint');

      // One evaluation configured: the commands take it without asking.
      await palette(page, 'Eval Runner: Run Evaluation');
      const failed = await notification(page, '9/12 submitted', 60_000);
      assert.deepEqual(peers.echoed, { token: 1, key: 2 }, 'both peers did quote the secrets back');
      await palette(page, 'Eval Runner: Show Run Details');
      const frame = webview(page);
      await frame.locator('.row.state-failed').nth(2).waitFor();
      await frame.locator('.cell.c-error', { hasText: '[redacted]' }).first().waitFor();
      const pageHtml = async () => {
        const html = [];
        for (const f of page.frames()) {
          const where = f === page.mainFrame() ? 'the workbench page' : `the frame ${f.url().replace(/[?#].*/, '').split('/').slice(-3).join('/')}`;
          html.push([`DOM of ${where}`, await f.evaluate(() => document.documentElement.outerHTML).catch(() => '')]);
        }
        return html;
      };
      const dom = await pageHtml();
      assert.ok(dom.some(([, h]) => h.includes('Incorrect API key provided: [redacted]')), 'the webview shows the endpoint\'s words, redacted');
      await shot(page, 'secrets-redacted');

      await failed.locator('a.monaco-button', { hasText: 'Rerun Failed' }).click();
      await openView(page);
      await treeRow(page, '12/12 submitted').waitFor({ timeout: 60_000 });
      await palette(page, 'Notifications: Clear All Notifications');
      await palette(page, 'Eval Runner: Set Token');
      await inputBox(page, 'Token', `${TOKEN}-wrong`, { password: true });
      await notification(page, 'saved in secret storage');
      await palette(page, 'Eval Runner: Fetch Prompts');
      await notification(page, 'rejected the personal access token');
      dom.push(...(await pageHtml()));
      const { runDir, serverOutput } = wb;
      await wb.close();
      const log = wb.extensionLog();
      wb = undefined;

      // Every file the editor wrote under its run directory (profile, logs, global storage with the journal,
      // temp files), except the browser profile: SecretStorage keeps its values there, as it should.
      const files = filesUnder(runDir, new Set([join(runDir, 'chromium')]));
      assert.match(log, /Rejected request with header Bearer \[redacted\]/, 'the log has the service\'s words, redacted');
      assert.match(log, /Run Details rendered/, 'the log was written at debug level');
      assert.ok(files.some((f) => f.endsWith('.jsonl') && statSync(f).size > 0), 'the journal is among the files searched');
      const needles = FRAGMENTS.flatMap((f) => /** @type {[string, Buffer][]} */ ([[f, Buffer.from(f, 'utf8')], [`${f} (UTF-16)`, Buffer.from(f, 'utf16le')]]));
      const leaks = [];
      for (const file of files) {
        // A runner lingers a few seconds after its run, then removes its file beside the journal: under load that can
        // fall between the listing and this read. A file gone holds nothing any more; any other error fails the test.
        const bytes = readIfThere(file);
        for (const [name, needle] of needles) if (bytes?.includes(needle)) leaks.push(`${name} in ${relative(runDir, file)}`);
      }
      for (const [where, text] of [...dom, ['code-server output', serverOutput.join('')]]) {
        for (const f of FRAGMENTS) if (text.includes(f)) leaks.push(`${f} in ${where}`);
      }
      assert.deepEqual(leaks, [], `searched ${files.length} files, ${dom.length} documents and the server's output`);
    } finally {
      await sandbox.close();
    }
  });
  it('runs with an identity: another target asks before it replaces answers, Start Fresh answers all again, a CLI run shows in the sidebar', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 12, robustnessTraces: 8, generationSeconds: 0, evaluationSeconds: 0 });
    try {
      wb = await openWorkbench({
        settings: {
          'evalRunner.baseUrl': sandbox.baseUrl,
          'evalRunner.evaluations': [
            { evaluationId: 1, kind: 'benchmark', label: 'Identity bench' },
            { evaluationId: 2, kind: 'robustness', label: 'Robustness from CI' },
          ],
          'evalRunner.target': { type: 'echo' },
        },
      });
      const { page } = wb;
      await palette(page, 'Eval Runner: Set Token');
      await inputBox(page, 'Token', sandbox.token, { password: true });
      await notification(page, 'saved in secret storage');
      await palette(page, 'Eval Runner: Run Evaluation', { pick: 'Identity bench' });
      await notification(page, 'Identity bench: 12/12 submitted (12 in this run)', 60_000);

      await palette(page, 'Eval Runner: Select Target', { pick: 'Shell command' });
      await inputBox(page, 'Shell command', 'tr a-z A-Z');
      await notification(page, 'Target: Shell command');
      // The first run's "12/12 submitted" must not be mistaken for the second's.
      await palette(page, 'Notifications: Clear All Notifications');
      await palette(page, 'Eval Runner: Run Evaluation', { pick: 'Identity bench' });
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor();
      const text = await dialog.innerText();
      assert.match(text, /its answers came from another target/);
      assert.match(text, /echo in run .*: 12 trace\(s\), 12 submitted, 0 not yet/);
      assert.match(text, /You asked for: command: tr a-z A-Z\./);
      assert.equal(sandbox.stats.submissions, 12, 'nothing is sent while the question is open');
      await shot(page, 'run-identity-question');
      await dialog.locator('a.monaco-button', { hasText: 'Start Fresh' }).click();
      await notification(page, 'Identity bench: 12/12 submitted (12 in this run)', 60_000);
      assert.equal(sandbox.stats.submissions, 24, 'every trace answered again and resubmitted');
      for (const p of seedPrompts('benchmark', 12)) assert.equal(sandbox.answerOf(1, p.traceId), p.content.toUpperCase().replace(/\r?\n$/, ''));

      // The CLI, in the state folder the editor uses ($XDG_STATE_HOME/eval-runner of its process).
      const cliRun = await new Promise((resolve) => {
        const child = spawn(process.execPath, [CLI, 'run', '--base-url', sandbox.baseUrl, '--evaluation', '2', '--kind', 'robustness', '--target', 'echo',
          '--state-dir', join(wb.runDir, 'xdg-state', 'eval-runner')], { env: { ...process.env, EVAL_RUNNER_TOKEN: sandbox.token }, stdio: 'ignore' });
        child.on('close', resolve);
      });
      assert.equal(cliRun, 0);
      await openView(page);
      await treeRow(page, '8/8 submitted').waitFor({ timeout: 30_000 });
      await shot(page, 'run-identity-cli-run-in-sidebar');
    } finally {
      await sandbox.close();
    }
  });
  it('review and insight: live run figures, a keyboard-only grid that keeps focus, verdicts everywhere, Compare Runs', async () => {
    const TRACES = 40;
    // A slow model that reports usage: the run lasts long enough to walk the table while rows update.
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, modelLatencyMs: 250 });
    const prompts = seedPrompts('benchmark', TRACES);
    const words = prompts.reduce((n, p) => n + wordCount(p.content), 0);
    try {
      wb = await openWorkbench({
        settings: {
          'evalRunner.baseUrl': sandbox.baseUrl,
          'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Review bench' }],
          'evalRunner.target': { type: 'openai', baseUrl: `${sandbox.baseUrl}/v1`, model: 'sandbox-echo' },
          'evalRunner.concurrency': 2,
        },
      });
      const { page } = wb;
      await palette(page, 'Eval Runner: Set Token');
      await inputBox(page, 'Token', sandbox.token, { password: true });
      await notification(page, 'saved in secret storage');
      await palette(page, 'Eval Runner: Run Evaluation');
      // The loopback model needs no key: an empty answer marks it keyless.
      await inputBox(page, 'API key for', '', { password: true });
      await palette(page, 'Eval Runner: Show Run Details');
      const frame = webview(page);
      const grid = frame.getByRole('grid', { name: 'Traces' });
      await frame.locator('.row.state-submitted').first().waitFor();
      // Charts off: the run's new charts (every 3 s, and at its end) are not drawn while hidden; the charts drawn
      // before are marked to tell them from any drawn since.
      await frame.getByRole('checkbox', { name: 'Charts' }).uncheck();
      await frame.locator('.charts').evaluate((n) => [...n.children].forEach((c) => c.setAttribute('data-probe', 'before')));

      // Keyboard only: focus the grid, walk down; rows keep updating under the run, focus and the active row stay.
      await grid.focus();
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
      const activeKey = () => frame.locator('.table').evaluate((g) => document.getElementById(g.getAttribute('aria-activedescendant') ?? '')?.dataset.key ?? null);
      const focusedIsGrid = () => frame.locator('.table').evaluate((g) => document.activeElement === g);
      assert.equal(await activeKey(), prompts[3].traceId, 'three rows down from the first');
      const submittedBefore = sandbox.stats.submissions;
      // A row is drawn again only when what it shows changed: a finished row keeps its very cells while others update.
      const finished = frame.locator('.row.state-submitted').first();
      const finishedKey = await finished.getAttribute('data-key');
      await finished.locator('.c-state > *').first().evaluate((n) => n.setAttribute('data-probe', 'kept'));
      const submittedRows = await frame.locator('.row.state-submitted').count();
      await page.waitForTimeout(1200);
      assert.ok(sandbox.stats.submissions > submittedBefore, 'the run went on meanwhile');
      await frame.locator('.row.state-submitted').nth(submittedRows).waitFor();
      assert.equal(await frame.locator(`.row[data-key="${finishedKey}"] .c-state [data-probe="kept"]`).count(), 1, 'the finished row kept its cells');
      assert.equal(await focusedIsGrid(), true, 'focus stayed on the grid through the updates');
      assert.equal(await activeKey(), prompts[3].traceId, 'the active row stayed');
      await page.keyboard.press('End');
      assert.equal(await activeKey(), prompts[TRACES - 1].traceId);
      await page.keyboard.press('Home');
      await page.keyboard.press('PageDown');
      assert.notEqual(await activeKey(), prompts[0].traceId);
      await page.keyboard.press('Home');
      // A screen reader's view: rows by accessible name, the grid's row count.
      await frame.getByRole('row', { name: new RegExp(`^${prompts[0].traceId}, `) }).waitFor();
      assert.equal(await frame.locator('.table .row.head').getAttribute('aria-rowindex'), '1');

      await frame.getByText('100% submitted').waitFor({ timeout: 60_000 });
      // The run's final figures, and its end (Rerun… back, drawn from the same line): the run's last charts come with
      // that line at the latest (FiguresCache works them out at once for a run that ended), so none is still to come
      // here, and none may have been drawn while the charts were off.
      const figures = frame.locator('.run-stats');
      await figures.filter({ hasText: `tokens ${words.toLocaleString('en-US')} prompt + ${words.toLocaleString('en-US')} completion` }).waitFor();
      await frame.getByRole('button', { name: 'Rerun…' }).waitFor();
      assert.equal(await frame.locator('.charts > :not([data-probe])').count(), 0, 'no chart drawn while the charts were off');
      // On again: the run's last charts are drawn then.
      await frame.getByRole('checkbox', { name: 'Charts' }).check();
      await frame.locator('.charts > :not([data-probe]) svg.chart').nth(1).waitFor();
      assert.match(await figures.innerText(), /latency p50 \d+ ms · p95 \d+ ms · max \d+ ms/);
      // The run's charts, drawn by the report's chart code: a latency histogram whose bars add up to the answers.
      await frame.locator('.charts svg.chart').nth(1).waitFor();
      const histogramBars = await frame.locator('.charts svg.chart').first().locator('rect.chart-bar title').allTextContents();
      assert.equal(histogramBars.reduce((n, t) => n + Number(/** @type {RegExpExecArray} */ (/: (\d+) answer/.exec(t))[1]), 0), TRACES);
      await shot(page, 'process-details-charts');

      // A verdict and a note from the keyboard, on the active (first) row.
      await grid.focus();
      await page.keyboard.press('g');
      await frame.locator(`.row.verdict-good[data-key="${prompts[0].traceId}"]`).waitFor();
      await page.keyboard.press('n');
      await inputBox(page, 'Note on the answer', 'echoes the prompt: fine for the sandbox');
      await frame.getByRole('row', { name: new RegExp(`^${prompts[0].traceId}, .*rated good`) }).waitFor();
      await frame.locator('select.verdict-filter').selectOption('good');
      await frame.locator('.shown', { hasText: `1 of ${TRACES} traces` }).waitFor();
      await frame.getByRole('checkbox', { name: 'Full text' }).check();
      await frame.locator('.details-note', { hasText: 'echoes the prompt' }).waitFor();
      await shot(page, 'process-details-review');
      // Enter opens the active trace: the review editor shows the verdict and the note above the answer.
      await grid.focus();
      await page.keyboard.press('Enter');
      await page.locator('.codelens-decoration', { hasText: 'Good ✓' }).waitFor();
      await page.locator('.codelens-decoration', { hasText: 'Note: echoes the prompt' }).waitFor();
      await shot(page, 'review-verdict');
      await openView(page);
      await treeRow(page, 'Review bench').click();
      await treeRow(page, `Submitted (${TRACES})`).click();
      await treeRow(page, prompts[0].traceId).locator('.codicon-thumbsup').waitFor();
      // The export (here the CLI's, on the same journal) carries the verdict and the note.
      const exported = await new Promise((resolve) => {
        let out = '';
        const child = spawn(process.execPath, [CLI, 'export', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--format', 'jsonl',
          '--state-dir', join(wb.runDir, 'xdg-state', 'eval-runner')], { stdio: ['ignore', 'pipe', 'ignore'] });
        child.stdout.on('data', (c) => (out += c));
        child.on('close', () => resolve(out));
      });
      const first = exported.trim().split('\n').map((l) => JSON.parse(l)).find((r) => r.traceId === prompts[0].traceId);
      assert.equal(first.rating, 'good');
      assert.equal(first.note, 'echoes the prompt: fine for the sandbox');
      assert.equal(first.promptTokens, wordCount(prompts[0].content));

      // Another target, then Compare Runs.
      await palette(page, 'View: Close All Editors');
      await palette(page, 'Eval Runner: Select Target', { pick: 'Shell command' });
      await inputBox(page, 'Shell command', 'tr a-z A-Z');
      await notification(page, 'Target: Shell command');
      await palette(page, 'Notifications: Clear All Notifications');
      await palette(page, 'Eval Runner: Run Evaluation');
      await page.locator('.monaco-dialog-box a.monaco-button', { hasText: 'Start Fresh' }).click();
      await notification(page, `Review bench: ${TRACES}/${TRACES} submitted (${TRACES} in this run)`, 60_000);
      await palette(page, 'Eval Runner: Compare Runs', { pick: ['openai: sandbox-echo', 'command: tr a-z A-Z'] });
      const compare = webview(page);
      const differing = prompts.filter((p) => p.content !== p.content.toUpperCase()).length;
      await compare.locator('.stats', { hasText: `${differing} of ${TRACES} answers differ.` }).waitFor();
      await compare.locator('.shown', { hasText: `${differing} of ${TRACES} traces` }).waitFor();
      // The host filters and searches: every trace on asking, one found by its id, then as it was.
      await compare.getByLabel('Only differing').uncheck();
      await compare.locator('.shown', { hasText: `${TRACES} of ${TRACES} traces` }).waitFor();
      await compare.locator('input.search').fill(prompts[3].traceId);
      await compare.locator('.shown', { hasText: `1 of ${TRACES} traces` }).waitFor();
      assert.deepEqual(await compare.locator('.row[data-key]').evaluateAll((rows) => rows.map((r) => r.dataset.key)), [prompts[3].traceId]);
      await compare.locator('input.search').fill('');
      await compare.getByLabel('Only differing').check();
      await compare.locator('.shown', { hasText: `${differing} of ${TRACES} traces` }).waitFor();
      await shot(page, 'compare-runs');
      await compare.getByRole('grid').focus();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await page.locator('.tabs-container .tab', { hasText: '↔' }).waitFor();
      await shot(page, 'compare-runs-diff');
    } finally {
      await sandbox.close();
    }
  });
  it('the loop: a Python function answers, two answers marked bad, the file edited and saved, Rerun Traces, the comparison shows the two changed answers; both panels come back after a reload', async () => {
    const TRACES = 10;
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, generationSeconds: 0 });
    const prompts = seedPrompts('benchmark', TRACES);
    // Python slices code points, not UTF-16 units.
    const head = (p) => [...p.content].slice(0, 60).join('');
    try {
      wb = await openWorkbench({
        settings: {
          'evalRunner.baseUrl': sandbox.baseUrl,
          'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Loop bench' }],
          'evalRunner.concurrency': 2,
        },
      });
      const { page } = wb;
      writeFileSync(join(wb.runDir, 'workspace', 'model.py'), 'def answer(prompt):\n    return "draft: " + prompt[:60]\n\n\ndef unused(x):\n    return x\n');
      await palette(page, 'Eval Runner: Set Token');
      await inputBox(page, 'Token', sandbox.token, { password: true });
      await notification(page, 'saved in secret storage');

      // Select Target → Python function: the workspace's file, then its function.
      await palette(page, 'Eval Runner: Select Target', { pick: 'Python function' });
      await quickPick(page, 'model.py');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'unused' }).waitFor();
      await quickPick(page, 'answer');
      await notification(page, 'Target: Python function');
      await palette(page, 'Eval Runner: Run Evaluation');
      await notification(page, `Loop bench: ${TRACES}/${TRACES} submitted (${TRACES} in this run)`, 60_000);
      assert.equal(sandbox.answerOf(1, prompts[0].traceId), `draft: ${head(prompts[0])}`);

      // Two answers marked bad from the keyboard in Run Details.
      await palette(page, 'Notifications: Clear All Notifications');
      await palette(page, 'Eval Runner: Show Run Details');
      const frame = webview(page);
      const grid = frame.getByRole('grid', { name: 'Traces' });
      await frame.getByText('100% submitted').waitFor({ timeout: 30_000 });
      await grid.focus();
      await page.keyboard.press('Home');
      await page.keyboard.press('b');
      await frame.locator(`.row.verdict-bad[data-key="${prompts[0].traceId}"]`).waitFor();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('b');
      await frame.locator(`.row.verdict-bad[data-key="${prompts[1].traceId}"]`).waitFor();
      // The rows offer Debug Trace while the target is the user's own code: another target takes the buttons off the
      // rows in view and the function brings them back, though no row changed.
      const debugButtons = frame.locator('.row button[aria-label^="Debug "]');
      await debugButtons.first().waitFor();
      await palette(page, 'Eval Runner: Select Target', { pick: 'answers with the prompt' });
      await debugButtons.first().waitFor({ state: 'detached' });
      await palette(page, 'Eval Runner: Select Target', { pick: 'Python function' });
      await quickPick(page, 'model.py');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'unused' }).waitFor();
      await quickPick(page, 'answer');
      await debugButtons.first().waitFor();
      await palette(page, 'View: Close All Editors');

      // Edit the function in the editor and save.
      await page.keyboard.press('Control+P');
      await page.locator('.quick-input-widget input.input').fill('model.py');
      await quickPick(page, 'model.py');
      await page.locator('.monaco-editor .view-lines', { hasText: 'draft' }).waitFor();
      await page.locator('.monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+A');
      await page.keyboard.insertText('def answer(prompt):\n    return "final: " + prompt[:60]\n');
      await page.keyboard.press('Control+S');
      await page.locator('.tabs-container .tab.dirty').waitFor({ state: 'detached' });
      await palette(page, 'View: Close All Editors');

      // Rerun Traces → answers marked bad: a new run of those two, then Compare Runs on just them.
      await palette(page, 'Eval Runner: Rerun Traces');
      await quickPick(page, 'Answers marked bad');
      await notification(page, `Loop bench: ${TRACES}/${TRACES} submitted (2 in this run)`, 60_000);
      const compare = webview(page);
      await compare.locator('.stats', { hasText: '2 of 2 answers differ.' }).waitFor({ timeout: 30_000 });
      await compare.locator('.shown', { hasText: '2 of 2 traces' }).waitFor();
      await compare.getByText(`final: ${prompts[0].content.slice(0, 20)}`).first().waitFor();
      await shot(page, 'rerun-compare');
      assert.equal(sandbox.answerOf(1, prompts[0].traceId), `final: ${head(prompts[0])}`);
      assert.equal(sandbox.answerOf(1, prompts[1].traceId), `final: ${head(prompts[1])}`);
      assert.equal(sandbox.answerOf(1, prompts[2].traceId), `draft: ${head(prompts[2])}`, 'the others untouched');

      // Both panels come back after a reload of the window, as they were left: Compare Runs on the same two runs,
      // narrowed to the rerun traces and searched; Run Details filtered and searched for the new answers.
      await compare.locator('input.search').fill(prompts[1].traceId);
      await compare.locator('.shown', { hasText: '1 of 2 traces' }).waitFor();
      const comparedRuns = await compare.locator('.subtitle').innerText();
      await palette(page, 'Eval Runner: Show Run Details');
      const details = visibleWebview(page);
      await details.locator('select.filter').first().selectOption('submitted');
      await details.locator('input.search').fill('final:');
      await details.locator('.shown', { hasText: `2 of ${TRACES} traces` }).waitFor();
      // Reload as a user does (an orderly shutdown that stores the editors and each page's state first), not a
      // browser reload, which can cut the workbench's storage writes short.
      await page.waitForTimeout(500);
      await palette(page, 'Developer: Reload Window');
      await page.locator('.tabs-container .tab', { hasText: 'Compare: Loop bench' }).waitFor({ timeout: 60_000 });
      const restored = visibleWebview(page);
      await restored.locator('.shown', { hasText: `2 of ${TRACES} traces` }).waitFor({ timeout: 60_000 });
      assert.equal(await restored.locator('select.filter').first().inputValue(), 'submitted');
      assert.equal(await restored.locator('input.search').inputValue(), 'final:');
      await page.locator('.tabs-container .tab', { hasText: 'Compare: Loop bench' }).click();
      const compareAgain = visibleWebview(page);
      await compareAgain.locator('.shown', { hasText: '1 of 2 traces' }).waitFor({ timeout: 60_000 });
      assert.equal(await compareAgain.locator('input.search').inputValue(), prompts[1].traceId);
      assert.equal(await compareAgain.locator('.subtitle').innerText(), comparedRuns, 'the same two runs');
      await shot(page, 'compare-after-reload');
    } finally {
      await sandbox.close();
    }
  });

  it('Developer: Reload Window in the middle of a run: the run finishes in its runner, each trace submitted once, and the status bar shows its progress after the reload', async () => {
    const TRACES = 80;
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0 });
    // While this file exists the target holds its answers: the run is surely mid-way when the window comes back.
    const hold = join(RESULTS, `hold-${process.pid}`);
    try {
      wb = await openWorkbench({
        settings: {
          'evalRunner.baseUrl': sandbox.baseUrl,
          'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Reload bench' }],
          'evalRunner.target': { type: 'command', command: `while [ -f '${hold}' ]; do sleep 0.1; done; cat` },
          'evalRunner.concurrency': 2,
        },
      });
      const { page } = wb;
      await palette(page, 'Eval Runner: Set Token');
      await inputBox(page, 'Token', sandbox.token, { password: true });
      await notification(page, 'saved in secret storage');
      await palette(page, 'Eval Runner: Run Evaluation');
      const deadline = Date.now() + 30_000;
      while (sandbox.stats.submissions < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(sandbox.stats.submissions >= 6, 'the run is under way');
      mkdirSync(RESULTS, { recursive: true });
      writeFileSync(hold, '');
      await palette(page, 'Developer: Reload Window');
      // After the reload the window finds the run in its runner and follows it.
      const status = page.locator('.part.statusbar').getByText(new RegExp(`Eval Runner \\d+/${TRACES}`));
      await status.waitFor({ timeout: 60_000 });
      const shown = Number(/** @type {RegExpExecArray} */ (/(\d+)\//.exec(await status.innerText()))[1]);
      assert.ok(shown < TRACES, `the status bar followed the run mid-way (${shown}/${TRACES})`);
      await shot(page, 'run-after-reload');
      rmSync(hold, { force: true });
      await notification(page, `Reload bench: ${TRACES}/${TRACES} submitted`, 90_000);
      assert.equal(sandbox.stats.submissions, TRACES);
      for (const p of seedPrompts('benchmark', TRACES)) assert.equal(sandbox.submissionsOf(1, p.traceId), 1, `${p.traceId} submitted once`);
    } finally {
      rmSync(hold, { force: true });
      await sandbox.close();
    }
  });
});

/** A file's bytes, or undefined when it was removed since it was listed. */
function readIfThere(/** @type {string} */ file) {
  try {
    return readFileSync(file);
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') return undefined;
    throw error;
  }
}
