// The one test command (npm test): type-check, build, then every suite, each ending with its own
// "N passed, N failed" line, and a final total line. Exits non-zero if any step fails.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';

const results = [];
let failed = false;

function step(name, command, args, env = {}) {
  const started = Date.now();
  const r = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env }, encoding: 'utf8' });
  process.stdout.write(r.stdout ?? '');
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary = /(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$/m.exec(r.stdout ?? '');
  const ok = r.status === 0;
  if (!ok) failed = true;
  results.push({ name, ok, seconds, passed: Number(summary?.[1] ?? 0), failedCount: Number(summary?.[2] ?? (ok ? 0 : 1)), counted: !!summary });
  return ok;
}

rmSync('out', { recursive: true, force: true });
if (step('typecheck', 'npx', ['tsc', '-p', '.'])) {
  step('build', 'node', ['scripts/build.mjs']) && step('unit', 'node', ['scripts/mochaSuite.mjs', 'unit', 'out/test/unit']);
}

console.log('\nSummary');
let passed = 0;
let failedTests = 0;
for (const r of results) {
  if (r.counted) {
    passed += r.passed;
    failedTests += r.failedCount;
  }
  console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(12)} ${r.seconds.padStart(6)} s${r.counted ? `  ${r.passed} passed, ${r.failedCount} failed` : ''}`);
}
if (failed && failedTests === 0) failedTests = 1;
console.log(`${passed} passed, ${failedTests} failed`);
process.exit(failed ? 1 : 0);
