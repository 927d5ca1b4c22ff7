// 4. A target with 100 ms latency.
import { cliRun, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

export const names = ['latency'];

export async function measure() {
  const figures = {};
  say('4. latency-bound: openai target with 100 ms latency, 2,000 traces, concurrency 32');
  const sb = await sandboxProcess(['--benchmark-traces', '2000', '--model-latency-ms', '100']);
  try {
    const r = await cliRun(
      runArgs(sb, ['--target', 'openai', '--openai-base-url', `${sb.baseUrl}/v1`, '--model', 'echo', '--concurrency', '32', '--state-dir', tempDir()]),
      { EVAL_RUNNER_TOKEN: sb.token, OPENAI_API_KEY: 'unused' },
    );
    const idealMs = (2000 * 100) / 32;
    figures.latency = { traces: 2000, concurrency: 32, latencyMs: 100, runMs: r.summary.durationMs, idealMs, overIdeal: r.summary.durationMs / idealMs, processWallMs: r.wallMs };
  } finally {
    await sb.stop();
  }
  return figures;
}
