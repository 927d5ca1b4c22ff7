// Runs one mocha suite (files matching a folder) and ends with the plain closing line
// "<suite>: N passed, N failed, N skipped" that CI and scripts/test.mjs read.
// EVAL_RUNNER_TEST_TIMES=<file> also writes where the time went (each file's tests and hooks added up, each test's
// and hook's duration), slowest first, to find what to speed up; nothing asserts on it.
import { readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import Mocha from 'mocha';

const [suite, dir, ...rest] = process.argv.slice(2);
const grep = rest.find((a) => a.startsWith('--grep='))?.slice(7);
// --parallel: one file per worker process, as many at once as there are cores (EVAL_RUNNER_TEST_JOBS to choose);
// for suites whose files share nothing (each starts its own sandbox on a free port, in its own folders). The editor
// suites stay serial: each of their files drives a code-server and a Chromium.
const jobs = Number(process.env.EVAL_RUNNER_TEST_JOBS) || availableParallelism();
const parallel = rest.includes('--parallel') && jobs > 1;
const files = (function walk(d) {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(d, e.name)) : /\.test\.m?js$/.test(e.name) ? [join(d, e.name)] : [],
  );
})(dir).sort();

const mocha = new Mocha({ reporter: 'spec', timeout: 30_000, ...(grep ? { grep } : {}), ...(parallel ? { parallel, jobs } : {}) });
for (const f of files) mocha.addFile(f);
// ESM test files (the e2e suite) need the async loader; in parallel the workers load them.
if (!parallel) await mocha.loadFilesAsync();
const runner = mocha.run();
const timesFile = process.env.EVAL_RUNNER_TEST_TIMES;
const times = timesFile ? recordTimes(runner) : undefined;
runner.on('end', () => {
  const { passes = 0, failures = 0, pending = 0 } = runner.stats ?? {};
  if (timesFile && times) writeFileSync(timesFile, JSON.stringify({ suite, ms: runner.stats?.duration, ...times() }, null, 1));
  console.log(`${suite}: ${passes} passed, ${failures} failed, ${pending} skipped`);
  // Open handles left by a broken test must not hang CI.
  setTimeout(() => process.exit(failures > 0 ? 1 : 0), 200).unref();
  process.exitCode = failures > 0 ? 1 : 0;
});

/** Listens to a run (serial or parallel: a parallel run's suites carry no file, its tests and hooks do). */
function recordTimes(r) {
  const runnables = [];
  const where = (x) => relative(process.cwd(), x.file ?? '');
  r.on('test end', (t) => runnables.push({ kind: 'test', file: where(t), title: t.fullTitle(), ms: t.duration ?? 0 }));
  r.on('hook end', (h) => runnables.push({ kind: 'hook', file: where(h), title: h.fullTitle(), ms: h.duration ?? 0 }));
  const slowest = (list) => list.sort((a, b) => b.ms - a.ms);
  return () => {
    const perFile = new Map();
    for (const x of runnables) perFile.set(x.file, (perFile.get(x.file) ?? 0) + x.ms);
    return { files: slowest([...perFile].map(([file, ms]) => ({ file, ms }))), runnables: slowest(runnables) };
  };
}
