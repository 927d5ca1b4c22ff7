// 5b. Text of a realistic size (issue 28): 100,000 prompts of 2 KB, the echo target answering 2 KB. The store keeps
// where texts are in the journal, an index beside it opens it: the run, the first status right after it, later ones
// and a run with nothing left to do.
import { statSync } from 'node:fs';
import { cliMeasured, cliRun, findFiles, median, runArgs, sandboxProcess, say, tempDir, tracesPerSecond } from './processes.mjs';

export const names = ['scale2k'];

export async function measure() {
  const figures = {};
  say('5b. scale2k: 100,000 traces of 2 KB prompts and answers (run, status, a run with nothing to do)');
  const sb = await sandboxProcess(['--benchmark-traces', '100000', '--prompt-bytes', '2048']);
  try {
    const stateDir = tempDir();
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    const args = runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]);
    const run = await cliRun(args, env);
    if (run.summary.submittedNow !== 100_000) throw new Error(`the 2 KB run submitted ${run.summary.submittedNow}`);
    const statusArgs = ['status', '--base-url', sb.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    // The first status right after the run, as a user types it: the run's end left the index current (issue 36).
    const first = await cliMeasured(statusArgs, env);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await cliMeasured(statusArgs, env));
    const noops = [];
    for (let i = 0; i < 3; i++) noops.push(await cliRun(args, env));
    const journal = findFiles(stateDir, '.jsonl');
    figures.scale2k = {
      traces: 100_000,
      promptBytes: 2048,
      runMs: run.summary.durationMs,
      tracesPerSecond: tracesPerSecond(run),
      runPeakRssMB: run.maxRssMB,
      journalBytes: journal.reduce((n, f) => n + statSync(f).size, 0),
      firstStatusMs: first.wallMs,
      statusMs: median(statuses.map((s) => s.wallMs)),
      statusRunsMs: statuses.map((s) => Math.round(s.wallMs)),
      statusPeakRssMB: Math.max(...statuses.map((s) => s.maxRssMB)),
      noopMs: median(noops.map((r) => r.wallMs)),
      noopRunsMs: noops.map((r) => Math.round(r.wallMs)),
      noopPeakRssMB: Math.max(...noops.map((r) => r.maxRssMB)),
    };
  } finally {
    await sb.stop();
  }
  return figures;
}
