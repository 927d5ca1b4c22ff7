// Runs the integration suite through @vscode/test-electron's runTests, unchanged. Here its
// vscodeExecutablePath is the project's code-shim (code-server + headless Chromium). Where a desktop
// VS Code can be downloaded, EVAL_RUNNER_DESKTOP_VSCODE=1 runs the same entry in it (plain runTests).
// The suite runs in a workbench whose workspace trust is off; the Restricted Mode cases then run in a second one
// with trust on, on a fresh folder it does not trust (the shim only: a desktop VS Code asks with a modal dialog).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { ROOT } from './workbench.mjs';

const desktop = process.env.EVAL_RUNNER_DESKTOP_VSCODE === '1';
const grep = process.env.EVAL_RUNNER_TEST_GREP;
const RESTRICTED = 'Restricted Mode';

/** One workbench's run of the suite: its counts (undefined: it did not report any) and its exit code. */
async function launch(folder, { trust = false, extraEnv = {} } = {}) {
  const runDir = mkdtempSync(join(tmpdir(), 'eval-runner-integration-'));
  const results = join(runDir, 'results.json');
  // A test-only extension serving a chat model (the vscode-lm target's counterpart), installed by copying it
  // into the editor's extensions folder (code-server loads one development extension, Eval Runner itself).
  cpSync(join(ROOT, 'test', 'fixtures', 'chat-model'), join(runDir, 'extensions', 'eval-runner-test.chat-model-0.0.1'), { recursive: true });
  let code = 0;
  try {
    code = await runTests({
      ...(desktop ? { version: '1.100.3' } : { vscodeExecutablePath: join(ROOT, 'test', 'harness', 'code-shim.mjs') }),
      extensionDevelopmentPath: ROOT,
      // The benchmark runs its own entry (out/test/bench/activation.js) through this same harness.
      extensionTestsPath: process.env.EVAL_RUNNER_TESTS_ENTRY ?? join(ROOT, 'out', 'test', 'integration', 'index.js'),
      extensionTestsEnv: {
        EVAL_RUNNER_TEST_RESULTS: results,
        ...(process.env.EVAL_RUNNER_BENCH_OUT ? { EVAL_RUNNER_BENCH_OUT: process.env.EVAL_RUNNER_BENCH_OUT } : {}),
        ...(trust ? { EVAL_RUNNER_WORKSPACE_TRUST: '1' } : {}),
        ...extraEnv,
      },
      launchArgs: [folder, `--user-data-dir=${join(runDir, 'user-data')}`, `--extensions-dir=${join(runDir, 'extensions')}`, '--enable-proposed-api=eval-runner-test.chat-model'],
    });
  } catch (error) {
    console.error(`integration: ${error instanceof Error ? error.message : String(error)}`);
    code = 1;
  }
  return { code, stats: existsSync(results) ? JSON.parse(readFileSync(results, 'utf8')) : undefined };
}

const launches = [launch(join(ROOT, 'test', 'fixtures', 'workspace'))];
if (!desktop && !process.env.EVAL_RUNNER_TESTS_ENTRY && (!grep || grep.toLowerCase().includes('restricted'))) {
  const folder = join(mkdtempSync(join(tmpdir(), 'eval-runner-untrusted-')), 'cloned-repo');
  mkdirSync(folder);
  // Beside the first workbench, not after it: each has its own code-server, profile, folders and state, and the
  // first mostly waits (for its runs, its sandbox, its webviews), so the second's start and its cases cost little.
  launches.push(launch(folder, { trust: true, extraEnv: { EVAL_RUNNER_TEST_GREP: RESTRICTED } }));
}
const runs = await Promise.all(launches);
const sum = (key) => runs.reduce((n, r) => n + (r.stats?.[key] ?? 0), 0);
const failed = runs.reduce((n, r) => n + (r.stats ? r.stats.failures : 1), 0);
console.log(`integration: ${sum('passes')} passed, ${failed} failed, ${sum('pending')} skipped`);
process.exit(runs.every((r) => r.code === 0 && r.stats && r.stats.failures === 0) ? 0 : 1);
