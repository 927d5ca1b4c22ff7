// 4e. The Batch API (issue 30): 10,000 prompts through the sandbox's Batch API (echo model, each batch complete 2 s
// after it is created), against the same prompts live at concurrency 64. The batch's own 2 s is the provider's time;
// what the run adds to it (the upload, the polls, reading the output, the submissions) is the figure.
import { cliRun, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

export const names = ['batchapi'];

export async function measure() {
  const figures = {};
  say('4e. Batch API: 10,000 prompts, batches complete 2 s after creation, vs live calls at c=64');
  const traces = 10_000;
  const sb = await sandboxProcess(['--benchmark-traces', String(traces), '--batch-delay-ms', '2000']);
  const env = { EVAL_RUNNER_TOKEN: sb.token };
  const common = ['--target', 'openai', '--openai-base-url', `${sb.baseUrl}/v1`, '--model', 'gpt-4o-mini', '--concurrency', '64'];
  try {
    const batched = await cliRun(runArgs(sb, [...common, '--batch', '--state-dir', tempDir()]), env);
    const live = await cliRun(runArgs(sb, [...common, '--state-dir', tempDir()]), env);
    for (const r of [batched, live]) if (r.summary.submittedNow !== traces) throw new Error(`a Batch API bench run submitted ${r.summary.submittedNow}`);
    figures.batchapi = {
      traces,
      batchDelayMs: 2000,
      batchMs: batched.summary.durationMs,
      overheadMs: batched.summary.durationMs - 2000,
      liveMs: live.summary.durationMs,
      batchCpuMsPerTrace: batched.cpuMs / traces,
      liveCpuMsPerTrace: live.cpuMs / traces,
      batches: batched.summary.batch.batches,
      tokens: batched.summary.batch.promptTokens + batched.summary.batch.completionTokens,
      savedUsd: batched.summary.batch.savedUsd,
    };
  } finally {
    await sb.stop();
  }
  return figures;
}
