// Runs the integration suite through @vscode/test-electron's runTests, unchanged. Here its
// vscodeExecutablePath is the project's code-shim (code-server + headless Chromium). Where a desktop
// VS Code can be downloaded, EVAL_RUNNER_DESKTOP_VSCODE=1 runs the same entry in it (plain runTests).
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { ROOT } from './workbench.mjs';

const runDir = mkdtempSync(join(tmpdir(), 'eval-runner-integration-'));
const results = join(runDir, 'results.json');
const desktop = process.env.EVAL_RUNNER_DESKTOP_VSCODE === '1';
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
    extensionTestsEnv: { EVAL_RUNNER_TEST_RESULTS: results, ...(process.env.EVAL_RUNNER_BENCH_OUT ? { EVAL_RUNNER_BENCH_OUT: process.env.EVAL_RUNNER_BENCH_OUT } : {}) },
    launchArgs: [
      join(ROOT, 'test', 'fixtures', 'workspace'),
      `--user-data-dir=${join(runDir, 'user-data')}`,
      `--extensions-dir=${join(runDir, 'extensions')}`,
      '--enable-proposed-api=eval-runner-test.chat-model',
    ],
  });
} catch (error) {
  console.error(`integration: ${error instanceof Error ? error.message : String(error)}`);
  code = 1;
}
const stats = existsSync(results) ? JSON.parse(readFileSync(results, 'utf8')) : undefined;
console.log(`integration: ${stats?.passes ?? 0} passed, ${stats ? stats.failures : 1} failed, ${stats?.pending ?? 0} skipped`);
process.exit(code === 0 && stats && stats.failures === 0 ? 0 : 1);
