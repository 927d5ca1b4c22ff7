// 5. 100,000 traces.
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { builtModule, cliRun, findFiles, listOnce, median, runArgs, sandboxProcess, say, tempDir, tracesPerSecond } from './processes.mjs';

const require = createRequire(import.meta.url);

export const names = ['scale'];

export async function measure() {
  const figures = {};
  say('5. scale: 100,000 traces (list + validate, a whole run, resume over the finished journal)');
  const sb = await sandboxProcess(['--benchmark-traces', '100000']);
  const { createApiClient } = require(builtModule('api', 'client.js'));
  try {
    const client = createApiClient({ baseUrl: sb.baseUrl, token: sb.token });
    const times = [];
    let count = 0;
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      count = (await client.listPrompts('benchmark', 1)).length;
      if (i > 0) times.push(performance.now() - t0); // the first warms the connection and the JIT
    }
    await client.close();
    const bytes = Buffer.byteLength(JSON.stringify(await listOnce(sb)));
    const stateDir = tempDir();
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    const args = runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]);
    const run = await cliRun(args, env);
    const resume = await cliRun(args, env);
    const journal = findFiles(stateDir, '.jsonl');
    figures.scale = {
      traces: count,
      listBytes: bytes,
      listValidateMs: median(times),
      listValidateRunsMs: times.map((t) => Math.round(t)),
      runMs: run.summary.durationMs,
      tracesPerSecond: tracesPerSecond(run),
      peakRssMB: run.maxRssMB,
      journalBytes: journal.reduce((n, f) => n + statSync(f).size, 0),
      resumeMs: resume.summary.durationMs,
      resumeProcessWallMs: resume.wallMs,
      resumeSubmitted: resume.summary.submittedNow,
      resumePeakRssMB: resume.maxRssMB,
    };
  } finally {
    await sb.stop();
  }
  return figures;
}
