// 4c. Your own code as the target: a Python function whose module takes 300 ms to load (imports, weights),
// 300 prompts, concurrency 8; the python target (workers load it once) against the command target (a process
// and a load per prompt) and the ideal (load + N × call ÷ workers; the function itself returns at once).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { builtModule, cliRun, median, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

const require = createRequire(import.meta.url);

export const names = ['owncode'];

export async function measure() {
  const figures = {};
  say('4c. own code: a Python function, 300 ms module load, 300 prompts, concurrency 8 (python target, command target)');
  const dir = tempDir();
  const loadMs = 300;
  writeFileSync(join(dir, 'model.py'), `import time\ntime.sleep(${loadMs / 1000})\n\ndef answer(prompt):\n    return prompt[:200]\n`);
  writeFileSync(join(dir, 'cmd_model.py'), 'import sys\nsys.path.insert(0, sys.argv[1])\nimport model\nsys.stdout.write(model.answer(sys.stdin.read()))\n');
  const sb = await sandboxProcess(['--benchmark-traces', '300']);
  const env = { EVAL_RUNNER_TOKEN: sb.token };
  try {
    const workers = Math.min(8, os.availableParallelism());
    /** @type {Record<'python' | 'command', Awaited<ReturnType<typeof cliRun>>[]>} */
    const runs = { python: [], command: [] };
    for (let i = 0; i < 3; i++) {
      runs.python.push(await cliRun(runArgs(sb, ['--target', 'python', '--python-file', join(dir, 'model.py'), '--concurrency', '8', '--state-dir', tempDir()]), env));
      if (i === 0) runs.command.push(await cliRun(runArgs(sb, ['--target', 'command', '--command', `python3 ${join(dir, 'cmd_model.py')} ${dir}`, '--concurrency', '8', '--state-dir', tempDir()]), env));
    }
    for (const r of [...runs.python, ...runs.command]) if (r.summary.submittedNow !== 300) throw new Error(`an own-code run submitted ${r.summary.submittedNow}`);
    // The protocol's own cost: one worker, concurrency 1, a function that returns at once, 2,000 calls.
    const { createPythonTarget } = require(builtModule('core', 'targets', 'python', 'pythonTarget.js'));
    writeFileSync(join(dir, 'instant.py'), 'def answer(prompt):\n    return prompt\n');
    const target = createPythonTarget({ type: 'python', file: join(dir, 'instant.py'), workers: 1 }, { concurrency: 1 });
    const call = { signal: new AbortController().signal, timeoutMs: 60_000, context: { traceId: 't' } };
    await target.send('warm-up', call);
    const calls = 2000;
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await target.send(`prompt ${i} ${'x'.repeat(200)}`, call);
    const perCallMs = (performance.now() - t0) / calls;
    await target.close();
    const pythonMs = median(runs.python.map((r) => r.summary.durationMs));
    const idealMs = loadMs + (300 * 0) / workers;
    figures.owncode = {
      traces: 300,
      loadMs,
      concurrency: 8,
      workers,
      pythonMs,
      pythonRunsMs: runs.python.map((r) => Math.round(r.summary.durationMs)),
      pythonProcessWallMs: median(runs.python.map((r) => r.wallMs)),
      commandMs: runs.command[0].summary.durationMs,
      idealMs,
      // promptfoo's Python provider on the same workload, as issue 19 measured it on this kind of machine (3.1 s).
      promptfooMs: 3100,
      overPromptfoo: 3100 / pythonMs,
      protocolMsPerCall: perCallMs,
    };
  } finally {
    await sb.stop();
  }
  return figures;
}
