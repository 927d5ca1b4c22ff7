import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClient } from '../../src/api/client';
import { runCharts } from '../../src/core/report/reportData';
import { describeStats, runStats } from '../../src/core/report/runStats';
import { EvaluationSession } from '../../src/core/session/session';
import type { RunSummary } from '../../src/core/run/engine';
import { TargetError } from '../../src/core/targets/target';
import { createTarget, targetIdentity } from '../../src/core/targets/targetSpec';
import type { TargetSpec } from '../../src/core/targets/targetSpec';
import type { WorkerTarget } from '../../src/core/targets/python/workerTarget';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { tempDir } from '../unit/helpers/runs';
import { FAST_RETRY } from '../unit/helpers/servers';

const TRACES = 30;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A model file whose module records its pid at load in `dir/pids`; with `child`, each worker also starts a
 * helper process that would sleep for two minutes and records its pid in `dir/children`.
 */
function pythonModel(dir: string, body: string, { child = false } = {}): string {
  const file = join(dir, 'model.py');
  const helper = child
    ? `child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])
with open(${JSON.stringify(join(dir, 'children'))}, 'a') as f:
    f.write('%d\\n' % child.pid)
`
    : '';
  writeFileSync(
    file,
    `import os, sys, time, subprocess
with open(${JSON.stringify(join(dir, 'pids'))}, 'a') as f:
    f.write('%d\\n' % os.getpid())
${helper}${body}
`,
  );
  return file;
}

function pidsIn(dir: string, name = 'pids'): number[] {
  try {
    return readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function waitFor(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('your own code as the target: workers that die, hang, print garbage, fail to import or are cancelled', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let logs: string[];
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, generationSeconds: 0, evaluationSeconds: 0 });
    logs = [];
  });
  afterEach(() => sandbox.close());

  /** targetRetries: 1 unless given; 'default' leaves it unset, as a user who asked for nothing. */
  async function run(spec: TargetSpec, dir: string, extra: { targetTimeoutMs?: number; cancelAfter?: number; concurrency?: number; targetRetries?: number | 'default' } = {}) {
    const concurrency = extra.concurrency ?? 4;
    const retries = extra.targetRetries ?? 1;
    const target = createTarget(spec, {}, { connections: concurrency, cwd: dir, onLog: (_l, m) => logs.push(m) }) as WorkerTarget;
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, retry: FAST_RETRY });
    const session = new EvaluationSession({ origin: client.origin, kind: 'benchmark', evaluationId: 1 }, join(dir, 'state'));
    try {
      const running = session.run({
        client,
        target,
        identity: targetIdentity(spec, dir),
        concurrency,
        ...(retries === 'default' ? {} : { targetRetries: retries }),
        ...(extra.targetTimeoutMs ? { targetTimeoutMs: extra.targetTimeoutMs } : {}),
        onLog: (_l, m) => logs.push(m),
      });
      if (extra.cancelAfter !== undefined) {
        await waitFor(() => sandbox.stats.submissions >= extra.cancelAfter!, 20_000);
        session.cancel(true);
      }
      const summary = (await running) as RunSummary;
      return { summary, target, session };
    } finally {
      await target.close?.();
      await client.close();
    }
  }

  it('a worker that dies on one prompt: only that trace fails, with the stderr tail; the worker is replaced and the rest submitted', async () => {
    const dir = tempDir();
    pythonModel(
      dir,
      `def answer(prompt, context):
    if context['traceId'] == 'bench-0011':
        print('about to crash on', context['traceId'], file=sys.stderr, flush=True)
        os._exit(9)
    if context['traceId'] > 'bench-0011':
        time.sleep(0.2)
    return 'ok ' + context['traceId']
`,
      { child: true },
    );
    // The traces after the crash take a while, so some wait for a worker when one dies: a replacement is started for
    // them (a pool replaces a worker when asked for one; quick traces could all be served before the retry).
    const { summary } = await run({ type: 'python', file: 'model.py', workers: 2 }, dir);
    assert.equal(summary.outcome, 'failedTraces', summary.message);
    assert.deepEqual(summary.failed.map((f) => f.traceId), ['bench-0011']);
    assert.match(summary.failed[0]!.reason, /exited with code 9 while answering: .*about to crash on bench-0011/s);
    assert.equal(summary.counts.submitted, TRACES - 1);
    assert.equal(sandbox.answerOf(1, 'bench-0012'), 'ok bench-0012');
    // The two that died (the first try and its retry) were replaced: at least one more served the rest.
    assert.ok(pidsIn(dir).length >= 3, `workers started: ${pidsIn(dir).length}`);
    assert.ok(logs.some((l) => /worker \d+: about to crash on bench-0011/.test(l)), 'the worker\'s stderr reaches the log');
    const all = [...pidsIn(dir), ...pidsIn(dir, 'children')];
    assert.ok(await waitFor(() => all.every((p) => !alive(p))), `a crashed worker's helper does not outlive it: ${all.filter(alive).join(', ')}`);
  });

  it('a worker that hangs: the time-out ends it (and its children), the trace fails, the rest go on', async () => {
    const dir = tempDir();
    pythonModel(
      dir,
      `def answer(prompt, context):
    if context['traceId'] == 'bench-0003':
        time.sleep(3600)
    return 'ok'
`,
      { child: true },
    );
    const { summary } = await run({ type: 'python', file: 'model.py', workers: 2 }, dir, { targetTimeoutMs: 1500 });
    assert.equal(summary.outcome, 'failedTraces', summary.message);
    assert.deepEqual(summary.failed.map((f) => f.traceId), ['bench-0003']);
    assert.match(summary.failed[0]!.reason, /did not answer within 2 s; the worker was ended and replaced/);
    assert.equal(summary.counts.submitted, TRACES - 1);
    const children = pidsIn(dir, 'children');
    assert.ok(children.length > 0);
    assert.ok(await waitFor(() => [...pidsIn(dir), ...children].every((p) => !alive(p))), 'no worker nor a child of one is left');
  });

  it('a worker that prints garbage: a clear error quoting its start, capped; the run goes on', async () => {
    const dir = tempDir();
    const script = join(dir, 'worker.js');
    writeFileSync(
      script,
      `const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const req = JSON.parse(line);
  if (req.traceId === 'bench-0005') process.stdout.write('Traceback: ' + 'x'.repeat(5000) + '\\u001b[31m\\n');
  else process.stdout.write(JSON.stringify({ id: req.id, answer: 'w ' + req.prompt.length, usage: { promptTokens: 1, completionTokens: 2 } }) + '\\n');
});
`,
    );
    const { summary, session } = await run({ type: 'worker', command: `"${process.execPath}" "${script}"`, workers: 2 }, dir);
    assert.equal(summary.outcome, 'failedTraces', summary.message);
    assert.deepEqual(summary.failed.map((f) => f.traceId), ['bench-0005']);
    const reason = summary.failed[0]!.reason;
    assert.match(reason, /wrote a line that is not the worker protocol: "Traceback: x+…"/);
    assert.ok(reason.length < 400, `capped: ${reason.length} characters`);
    assert.equal(summary.counts.submitted, TRACES - 1);
    const run0 = session.store.runs[0]!;
    assert.equal(run0.promptTokens, TRACES - 1, 'usage flows into the run figures');
  });

  it('a pool smaller than the concurrency: the latency journaled is the function\'s own time, the wait for a worker apart', async () => {
    const dir = tempDir();
    pythonModel(dir, `def answer(prompt):\n    time.sleep(0.05)\n    return 'ok'\n`);
    const { summary, session } = await run({ type: 'python', file: 'model.py', workers: 2 }, dir, { concurrency: 8 });
    assert.equal(summary.outcome, 'completed', summary.message);
    // As journaled: read back from the file by another session.
    const reread = new EvaluationSession(session.key, join(dir, 'state'));
    await reread.load();
    const stats = runStats(reread.store.runs[0]!);
    // 8 at once on 2 workers: each call waits ~150 ms for a worker; counted as latency, the p50 was ~200 ms.
    assert.ok(stats.latencyMs && stats.latencyMs.p50 < 150, `latency p50 ${stats.latencyMs?.p50} ms for a 50 ms function`);
    assert.ok(stats.latencyMs.p50 >= 45, `the function's own 50 ms: ${stats.latencyMs.p50} ms`);
    assert.equal(reread.store.runs[0]!.queueWaits.length, TRACES, 'a wait journaled with every answer');
    assert.ok(stats.queueWaitMs && stats.queueWaitMs.p50 > 0, `the wait for a free worker is measured: ${JSON.stringify(stats.queueWaitMs)}`);
    assert.match(describeStats(stats), /latency p50 \d+ ms · p95 \d+ ms · max \d+ ms · worker wait p50 \d+ ms · p95 \d+ ms · max \d+ ms/);
  });

  it('an exception in the user\'s function is that prompt\'s answer: failed, not retried unless asked, one trimmed traceback each, red in the timeline', async () => {
    const dir = tempDir();
    const crashedOnce = join(dir, 'crashed-once');
    pythonModel(
      dir,
      `def check(trace):
    if trace in ('bench-0004', 'bench-0009', 'bench-0014', 'bench-0019'):
        raise ValueError('cannot answer ' + trace)

def answer(prompt, context):
    if context['traceId'] == 'bench-0002' and not os.path.exists(${JSON.stringify(crashedOnce)}):
        open(${JSON.stringify(crashedOnce)}, 'w').close()
        os._exit(7)
    check(context['traceId'])
    return 'ok'
`,
    );
    const { summary, session } = await run({ type: 'python', file: 'model.py', workers: 2 }, dir, { targetRetries: 'default' });
    assert.equal(summary.outcome, 'failedTraces', summary.message);
    assert.deepEqual(summary.failed.map((f) => f.traceId).sort(), ['bench-0004', 'bench-0009', 'bench-0014', 'bench-0019']);
    // One call per trace, and one more for the worker that crashed: a passing failure is still retried by default.
    assert.equal(summary.targetCalls, TRACES + 1);
    assert.equal(sandbox.answerOf(1, 'bench-0002'), 'ok');
    for (const { traceId, reason } of summary.failed) {
      assert.match(reason, new RegExp(`raised: ValueError: cannot answer ${traceId}\\nTraceback \\(most recent call last\\):\\n  File ".*model\\.py", line \\d+, in answer\\n`));
      assert.match(reason, /in check\n.*\nValueError: cannot answer/s);
      assert.equal(reason.split('Traceback (most recent call last)').length, 2, `one traceback: ${reason}`);
      assert.ok(!/evalRunnerShim|asyncio/.test(reason), `the shim's own frames are dropped: ${reason}`);
    }
    assert.equal(logs.filter((l) => l.includes('Traceback')).length, 4, `one traceback per failed trace in the log:\n${logs.join('\n')}`);
    const timeline = runCharts(session.store.runs[0]!).timeline;
    assert.equal(timeline.errors.reduce((a, b) => a + b, 0), 4, 'the failed traces are errors in the timeline');

    // Asked for (targetRetries, --target-retries N): the user's exceptions are retried too.
    const again = tempDir();
    pythonModel(again, `def answer(prompt, context):\n    if context['traceId'] == 'bench-0004':\n        raise ValueError('no')\n    return 'ok'\n`);
    const asked = await run({ type: 'python', file: 'model.py', workers: 2 }, again, { targetRetries: 2 });
    assert.deepEqual(asked.summary.failed.map((f) => f.traceId), ['bench-0004']);
    assert.equal(asked.summary.targetCalls, TRACES + 2);
  });

  it('a module that fails to import stops the run at once: the traceback\'s last line, a setup error, no trace failed', async () => {
    const dir = tempDir();
    pythonModel(dir, 'import torch_that_is_not_installed\ndef answer(prompt):\n    return prompt\n');
    const { summary } = await run({ type: 'python', file: 'model.py', workers: 2 }, dir);
    assert.equal(summary.outcome, 'error');
    assert.match(summary.message ?? '', /cannot start: ModuleNotFoundError: No module named 'torch_that_is_not_installed'/);
    assert.ok(summary.error instanceof TargetError && summary.error.details.setup, 'a setup error (the CLI exits 2)');
    assert.equal(summary.counts.failed, 0);
    assert.equal(summary.counts.submitted, 0);
    assert.equal(sandbox.stats.submissions, 0);
  });

  it('cancel mid-run: every worker and its children end, checked by pid', async () => {
    const dir = tempDir();
    pythonModel(
      dir,
      `async def answer(prompt):
    import asyncio
    await asyncio.sleep(0.2)
    return 'slow ' + str(len(prompt))
`,
      { child: true },
    );
    const { summary, target } = await run({ type: 'python', file: 'model.py', workers: 3 }, dir, { cancelAfter: 5 });
    assert.equal(summary.outcome, 'cancelled');
    assert.ok(summary.counts.submitted < TRACES);
    assert.deepEqual(target.pids, []);
    const pids = [...pidsIn(dir), ...pidsIn(dir, 'children')];
    assert.ok(pids.length >= 6, `three workers and their children started: ${pids.length}`);
    assert.ok(await waitFor(() => pids.every((p) => !alive(p))), `left alive: ${pids.filter(alive).join(', ')}`);
  });
});
