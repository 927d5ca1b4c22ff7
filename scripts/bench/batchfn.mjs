// 4d. A batch function (issue 30): a model that answers a batch for about the price of one prompt (a GPU's forward
// pass), 200 ms per call plus 2 ms per prompt, 1,000 prompts on 4 workers at concurrency 128: batches of 32 against
// one prompt per call. The function records each call's size, so the batches reached are the function's own count.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliRun, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

export const names = ['batchfn'];

export async function measure() {
  const figures = {};
  say('4d. batch function: 1,000 prompts, 200 ms per call + 2 ms per prompt, 4 workers, batches of 32 vs one per call');
  const dir = tempDir();
  const sizes = join(dir, 'sizes');
  writeFileSync(
    join(dir, 'model.py'),
    `import time
def answer(prompts, contexts):
    with open(${JSON.stringify(sizes)}, 'a') as f:
        f.write('%d\\n' % len(prompts))
    time.sleep(0.2 + 0.002 * len(prompts))
    return [p[:50] for p in prompts]

def one(prompt):
    time.sleep(0.2 + 0.002)
    return prompt[:50]
`,
  );
  const sb = await sandboxProcess(['--benchmark-traces', '1000']);
  const env = { EVAL_RUNNER_TOKEN: sb.token };
  const common = ['--target', 'python', '--python-file', join(dir, 'model.py'), '--workers', '4', '--concurrency', '128'];
  try {
    const batched = await cliRun(runArgs(sb, [...common, '--batch-size', '32', '--state-dir', tempDir()]), env);
    const single = await cliRun(runArgs(sb, [...common, '--python-function', 'one', '--state-dir', tempDir()]), env);
    for (const r of [batched, single]) if (r.summary.submittedNow !== 1000) throw new Error(`a batch-function run submitted ${r.summary.submittedNow}`);
    const calls = readFileSync(sizes, 'utf8').split('\n').filter(Boolean).map(Number);
    figures.batchfn = {
      prompts: 1000,
      workers: 4,
      batchSize: 32,
      batchMs: batched.summary.durationMs,
      singleMs: single.summary.durationMs,
      // The ideals: every call full (32 batches over 4 workers: 8 rounds of 200 + 64 ms), and 1,000 calls over 4 workers.
      batchIdealMs: Math.ceil(1000 / 32 / 4) * (200 + 2 * 32),
      singleIdealMs: (1000 / 4) * 202,
      calls: calls.length,
      meanBatch: calls.reduce((a, b) => a + b, 0) / calls.length,
      maxBatch: Math.max(...calls),
      speedup: single.summary.durationMs / batched.summary.durationMs,
    };
  } finally {
    await sb.stop();
  }
  return figures;
}
