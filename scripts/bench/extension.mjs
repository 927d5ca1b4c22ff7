// 7. The extension: bundle size and activation in the real extension host (code-server), 3 fresh hosts.
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { editorReady } from './editor.mjs';
import { ROOT, median, say, tempDir } from './processes.mjs';

export const names = ['extension'];

export function measure() {
  const figures = {};
  say('7. extension: dist/extension.js size; activation in the real extension host (3 fresh hosts)');
  const runs = [];
  if (editorReady()) {
    for (let i = 0; i < 3; i++) {
      const out = join(tempDir(), 'activation.json');
      const r = spawnSync(process.execPath, [join(ROOT, 'test', 'harness', 'runIntegration.mjs')], {
        encoding: 'utf8',
        env: { ...process.env, EVAL_RUNNER_TESTS_ENTRY: join(ROOT, 'out', 'test', 'bench', 'activation.js'), EVAL_RUNNER_BENCH_OUT: out },
      });
      if (r.status !== 0) throw new Error(`activation run failed: ${r.stdout.slice(-2000)}${r.stderr.slice(-2000)}`);
      runs.push(JSON.parse(readFileSync(out, 'utf8')));
    }
  }
  figures.extension = {
    bundleBytes: statSync(join(ROOT, 'dist', 'extension.js')).size,
    activationMs: runs.length ? median(runs.map((r) => r.activationMs)) : undefined,
    activationRunsMs: runs.map((r) => Number(r.activationMs.toFixed(1))),
    // Medians of each phase, in ms: the host before our bundle runs, our bundle's evaluation, the host
    // between it and activate() (the extension context), and activate() itself.
    phasesMs: runs.length
      ? {
          hostBeforeLoad: median(runs.map((r) => r.bundleStartMs)),
          bundleEvaluation: median(runs.map((r) => r.bundleEndMs - r.bundleStartMs)),
          hostContext: median(runs.map((r) => r.activateStartMs - r.bundleEndMs)),
          activate: median(runs.map((r) => r.activateEndMs - r.activateStartMs)),
        }
      : undefined, raw: runs,
    alreadyActive: runs.some((r) => r.wasActive),
    vscode: runs[0]?.vscodeVersion,
  };
  return figures;
}
