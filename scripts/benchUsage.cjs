// Preloaded into the CLI by `npm run bench` (node --require): on exit, writes the process's CPU time and
// peak RSS to $EVAL_RUNNER_BENCH_USAGE, so the figures are the CLI's own, not the benchmark's.
const { writeFileSync } = require('node:fs');

const out = process.env.EVAL_RUNNER_BENCH_USAGE;
if (out) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(out, JSON.stringify({ userMs: u.userCPUTime / 1000, systemMs: u.systemCPUTime / 1000, maxRssKB: u.maxRSS }));
  });
}
