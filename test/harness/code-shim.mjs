#!/usr/bin/env node
// Stands in for the `code` executable that @vscode/test-electron's runTests() launches: it receives the
// same arguments (--extensionDevelopmentPath=, --extensionTestsPath=, a folder, profile dirs) and runs
// them in code-server with headless Chromium, exiting with the workbench's own exit code.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchBrowser, startCodeServer, workbenchUrl } from './workbench.mjs';

const devPaths = [];
let testsPath;
let folder;
let userDataDir;
let extensionsDir;
const proposedApi = [];
for (const arg of process.argv.slice(2)) {
  const [name, ...rest] = arg.split('=');
  const value = rest.join('=');
  if (name === '--extensionDevelopmentPath') devPaths.push(resolve(value));
  else if (name === '--extensionTestsPath') testsPath = resolve(value);
  else if (name === '--user-data-dir') userDataDir = resolve(value);
  else if (name === '--extensions-dir') extensionsDir = resolve(value);
  else if (name === '--enable-proposed-api') proposedApi.push(value);
  else if (!arg.startsWith('-')) folder = resolve(arg);
  // Desktop-only flags (--no-sandbox, --disable-updates, ...) have no meaning here.
}
if (!testsPath || devPaths.length === 0) {
  console.error('code-shim: --extensionTestsPath and --extensionDevelopmentPath are required');
  process.exit(2);
}

const TIMEOUT_MS = Number(process.env.EVAL_RUNNER_EDITOR_TIMEOUT_MS ?? 300_000);
const runDir = mkdtempSync(join(tmpdir(), 'eval-runner-shim-'));
const server = await startCodeServer({
  runDir,
  ...(userDataDir ? { userDataDir } : {}),
  ...(extensionsDir ? { extensionsDir } : {}),
  // Proposed APIs a test-only extension uses (the chat model fixture), enabled for it alone.
  args: proposedApi.flatMap((id) => ['--enable-proposed-api', id]),
  // The Restricted Mode cases run in a workbench of their own with workspace trust on (runIntegration.mjs).
  trust: process.env.EVAL_RUNNER_WORKSPACE_TRUST === '1',
  log: (text) => {
    if (process.env.EVAL_RUNNER_EDITOR_VERBOSE) process.stderr.write(`[code-server] ${text}`);
  },
});
const browser = await launchBrowser(join(runDir, 'chromium'));
let code = 1;
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  const exited = new Promise((resolveExit) => {
    void page.exposeFunction('codeAutomationExit', (c) => resolveExit(Number(c)));
  });
  page.on('console', (msg) => {
    const text = msg.text();
    if (process.env.EVAL_RUNNER_EDITOR_VERBOSE) console.log(text);
    const at = text.indexOf('[eval-runner-test] ');
    if (at >= 0) console.log(text.slice(at + 19));
  });
  const payload = [
    ...devPaths.map((p) => ['extensionDevelopmentPath', server.remote(p)]),
    ['extensionTestsPath', server.remote(testsPath)],
  ];
  await page.goto(workbenchUrl(server, folder ?? runDir, payload));
  const timeout = new Promise((r) => setTimeout(() => r('timeout'), TIMEOUT_MS).unref());
  const result = await Promise.race([exited, timeout]);
  if (result === 'timeout') {
    console.error(`code-shim: the tests did not finish within ${TIMEOUT_MS / 1000} s`);
    await page.screenshot({ path: join(runDir, 'timeout.png') }).catch(() => undefined);
    console.error(`code-shim: screenshot at ${join(runDir, 'timeout.png')}`);
  } else code = result;
} finally {
  await browser.close().catch(() => undefined);
  await server.stop();
}
process.exit(code);
