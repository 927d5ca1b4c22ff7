// 5c. 600,000 prompts of 1 KB (a list of about 620 MB): the run completes within its memory goal.
import { cliRun, runArgs, sandboxProcess, say, tempDir, tracesPerSecond } from './processes.mjs';

export const names = ['scale600k'];

export async function measure() {
  const figures = {};
  say('5c. scale600k: 600,000 traces of 1 KB prompts (a run)');
  const sb = await sandboxProcess(['--benchmark-traces', '600000', '--prompt-bytes', '1024', '--max-body-bytes', String(64 * 1024 * 1024)]);
  try {
    const stateDir = tempDir();
    const run = await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]), { EVAL_RUNNER_TOKEN: sb.token });
    figures.scale600k = { traces: 600_000, submitted: run.summary.submittedNow, code: run.code, runMs: run.summary.durationMs, runPeakRssMB: run.maxRssMB, tracesPerSecond: tracesPerSecond(run) };
  } finally {
    await sb.stop();
  }
  return figures;
}
