// npm run bench: every speed figure of the project, side by side in one run, on this machine. Writes
// bench/results.json and prints a table. Not part of npm test: speed is measured here, never asserted in tests.
//   node scripts/bench.mjs [--only=ceiling,client,naive,latency,ratelimit,owncode,batchfn,batchapi,scale,scale2k,scale600k,list,journal,extension,webview,report,editorrun,editorscale]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync, watch, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { ROOT } from '../test/harness/workbench.mjs';

const require = createRequire(import.meta.url);
const CLI = join(ROOT, 'dist', 'cli.js');
const USAGE_PRELOAD = join(ROOT, 'scripts', 'benchUsage.cjs');
const BUDGETS = JSON.parse(readFileSync(join(ROOT, 'scripts', 'bench', 'budgets.json'), 'utf8'));
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const wanted = (name) => !only || only.includes(name);
const results = { machine: machine(), startedAt: new Date().toISOString(), figures: {} };

function machine() {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tempDir = (p = 'eval-runner-bench-') => mkdtempSync(join(os.tmpdir(), p));
const say = (line) => console.log(line);

/** The CLI's sandbox in its own process (as a real service would be). */
async function sandboxProcess(args) {
  const child = spawn(process.execPath, [CLI, 'sandbox', '--port', '0', '--json', '--evaluation-seconds', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c) => {
      text += c;
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(text.slice(0, nl)));
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
  });
  return {
    ...first,
    stop: () => new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    }),
  };
}

/** One CLI run in its own process; its summary line, wall time, CPU time and peak RSS. */
async function cliRun(args, env) {
  const usageFile = join(tempDir(), 'usage.json');
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--require', USAGE_PRELOAD, CLI, ...args, '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env, EVAL_RUNNER_BENCH_USAGE: usageFile },
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  const wallMs = performance.now() - t0;
  const summary = out.trim().split('\n').map((l) => JSON.parse(l)).find((l) => l.type === 'summary');
  if (!summary) throw new Error(`no summary from ${args.join(' ')} (exit ${code})`);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8'));
  return { code, summary, wallMs, cpuMs: usage.userMs + usage.systemMs, maxRssMB: usage.maxRssKB / 1024 };
}

/** Any CLI command in its own process: its wall time and peak RSS (status, or a run whose summary is not needed). */
async function cliMeasured(args, env) {
  const usageFile = join(tempDir(), 'usage.json');
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--require', USAGE_PRELOAD, CLI, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env, EVAL_RUNNER_BENCH_USAGE: usageFile } });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  const wallMs = performance.now() - t0;
  if (code !== 0) throw new Error(`${args[0]} exited ${code}`);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8'));
  return { out, wallMs, maxRssMB: usage.maxRssKB / 1024 };
}

/**
 * CPU time (user + system, ms) of every process on the machine, grouped by what it is, from /proc (Linux only;
 * empty elsewhere). Taken before and after a run, the difference says where the run's CPU went: the extension
 * host, code-server, the browser's renderers, the sandbox, the CLI.
 */
function cpuByRole() {
  const ticksPerMs = 100 / 1000; // USER_HZ is 100 on Linux
  const byRole = {};
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return byRole;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const role = processRole(cmd);
      if (role) byRole[role] = (byRole[role] ?? 0) + ticks / ticksPerMs;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return byRole;
}

function processRole(cmd) {
  if (cmd.includes('--type=extensionHost')) return 'extensionHost';
  if (/chrom(e|ium)/.test(cmd)) {
    const type = /--type=([\w-]+)/.exec(cmd)?.[1];
    return type ? `chromium ${type}` : 'chromium browser';
  }
  if (cmd.includes(' sandbox ')) return 'sandbox';
  if (cmd.includes('code-server') || cmd.includes('bootstrap-fork')) return 'code-server';
  if (cmd.includes(CLI)) return 'cli';
  return undefined;
}

const cpuDelta = (before, after) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, Math.round(v - (before[k] ?? 0))]).filter(([, v]) => v > 0));

const runArgs = (sb, extra) => ['run', '--base-url', sb.baseUrl, '--evaluation', '1', '--kind', 'benchmark', ...extra];
const tracesPerSecond = (r) => r.summary.submittedNow / (r.summary.durationMs / 1000);

async function listOnce(sb) {
  const res = await fetch(`${sb.baseUrl}/api/evaluation/promptsAll?evaluationId=1`, { headers: { authorization: `Bearer ${sb.token}` } });
  return (await res.json()).data;
}

// 1–3, 6: one sandbox with 20,000 traces.
if (['ceiling', 'client', 'naive', 'journal'].some(wanted)) {
  const sb = await sandboxProcess(['--benchmark-traces', '20000']);
  const env = { EVAL_RUNNER_TOKEN: sb.token };
  const prompts = await listOnce(sb);
  try {
    if (wanted('ceiling') || wanted('client')) {
      say('1. ceiling: autocannon, 64 connections, 5 s after a 2 s warm-up');
      const body = new URLSearchParams({ evaluationId: '1', traceId: prompts[0].traceId, llmResponse: prompts[0].content }).toString();
      const result = await autocannon({
        url: `${sb.baseUrl}/api/evaluation/response`,
        method: 'POST',
        headers: { authorization: `Bearer ${sb.token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body,
        connections: 64,
        duration: 5,
        warmup: { connections: 64, duration: 2 },
      });
      results.figures.ceiling = { requestsPerSecond: result.requests.average, non2xx: result.non2xx, errors: result.errors, latencyP99Ms: result.latency.p99 };
    }
    const client = [];
    const noJournal = [];
    if (wanted('client') || wanted('journal')) {
      say('2, 6. client: run --target echo, 20,000 traces, concurrency 64; journal on and off, alternating, 3 each');
      for (let i = 0; i < 3; i++) {
        client.push(await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', tempDir()]), env));
        noJournal.push(await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--no-journal']), env));
      }
      for (const r of [...client, ...noJournal]) if (r.summary.submittedNow !== 20000) throw new Error(`a run submitted ${r.summary.submittedNow}`);
      const rate = median(client.map(tracesPerSecond));
      results.figures.client = {
        traces: 20000,
        tracesPerSecond: rate,
        ratioToCeiling: results.figures.ceiling ? rate / results.figures.ceiling.requestsPerSecond : undefined,
        cpuMsPerTrace: median(client.map((r) => r.cpuMs / 20000)),
        processWallMs: median(client.map((r) => r.wallMs)),
        peakRssMB: Math.max(...client.map((r) => r.maxRssMB)),
      };
      const on = median(client.map((r) => r.summary.durationMs));
      const off = median(noJournal.map((r) => r.summary.durationMs));
      results.figures.journal = {
        onMs: on,
        offMs: off,
        overhead: on / off - 1,
        cpuMsPerTraceOn: median(client.map((r) => r.cpuMs / 20000)),
        cpuMsPerTraceOff: median(noJournal.map((r) => r.cpuMs / 20000)),
        runsOnMs: client.map((r) => Math.round(r.summary.durationMs)),
        runsOffMs: noJournal.map((r) => Math.round(r.summary.durationMs)),
      };
    }
    if (wanted('naive')) {
      say('3. naive: sequential, one fetch per request, 3,000 traces');
      const n = 3000;
      const headers = { authorization: `Bearer ${sb.token}` };
      const t0 = performance.now();
      const res = await fetch(`${sb.baseUrl}/api/evaluation/promptsAll?evaluationId=1`, { headers });
      const { data } = await res.json();
      for (const p of data.slice(0, n)) {
        const answer = p.content; // the echo target
        const r = await fetch(`${sb.baseUrl}/api/evaluation/response`, {
          method: 'POST',
          headers,
          body: new URLSearchParams({ evaluationId: '1', traceId: p.traceId, llmResponse: answer }),
        });
        await r.json();
      }
      const rate = n / ((performance.now() - t0) / 1000);
      results.figures.naive = { traces: n, tracesPerSecond: rate, clientOverNaive: results.figures.client ? results.figures.client.tracesPerSecond / rate : undefined };
    }
  } finally {
    await sb.stop();
  }
}

// 4. A target with 100 ms latency.
if (wanted('latency')) {
  say('4. latency-bound: openai target with 100 ms latency, 2,000 traces, concurrency 32');
  const sb = await sandboxProcess(['--benchmark-traces', '2000', '--model-latency-ms', '100']);
  try {
    const r = await cliRun(
      runArgs(sb, ['--target', 'openai', '--openai-base-url', `${sb.baseUrl}/v1`, '--model', 'echo', '--concurrency', '32', '--state-dir', tempDir()]),
      { EVAL_RUNNER_TOKEN: sb.token, OPENAI_API_KEY: 'unused' },
    );
    const idealMs = (2000 * 100) / 32;
    results.figures.latency = { traces: 2000, concurrency: 32, latencyMs: 100, runMs: r.summary.durationMs, idealMs, overIdeal: r.summary.durationMs / idealMs, processWallMs: r.wallMs };
  } finally {
    await sb.stop();
  }
}

// 4b. A hosted model's rate limit: an OpenAI-compatible echo model behind a token bucket (429, Retry-After: 1).
if (wanted('ratelimit')) {
  const { startRateLimitedModel } = require(join(ROOT, 'out', 'test', 'harness', 'rateLimitedModel.js'));
  // Each row twice: a bucket that holds a second's worth of requests, and a strict one that holds a tenth
  // (bursts are punished at once).
  const rows = [1, 0.1].flatMap((burstSeconds) =>
    [
      { name: '100 req/s, 200 ms, 2,000 prompts', perSecond: 100, latencyMs: 200, prompts: 2000, headers: false },
      { name: 'the same with x-ratelimit-* headers', perSecond: 100, latencyMs: 200, prompts: 2000, headers: true },
      { name: '50 req/s, 1 s (a slow model), 600 prompts', perSecond: 50, latencyMs: 1000, prompts: 600, headers: false },
    ].map((row) => ({ ...row, burstSeconds, name: `${row.name}, ${burstSeconds} s burst` })),
  );
  say('4b. rate-limited model: token bucket (1 s and 0.1 s of burst), 429 with Retry-After: 1, concurrency 64');
  results.figures.ratelimit = [];
  for (const row of rows) {
    const sb = await sandboxProcess(['--benchmark-traces', String(row.prompts)]);
    const model = await startRateLimitedModel(row);
    try {
      const r = await cliRun(
        runArgs(sb, ['--target', 'openai', '--openai-base-url', `${model.url}/v1`, '--model', 'echo', '--api-key-env', 'BENCH_KEY', '--concurrency', '64', '--state-dir', tempDir()]),
        { EVAL_RUNNER_TOKEN: sb.token, BENCH_KEY: 'unused' },
      );
      const idealMs = (row.prompts / row.perSecond) * 1000;
      const runningMs = r.summary.runningMs;
      results.figures.ratelimit.push({
        ...row,
        runMs: runningMs,
        idealMs,
        goodput: row.prompts / (runningMs / 1000) / row.perSecond,
        rejected: model.stats.rejected,
        rejectedShare: model.stats.rejected / (model.stats.admitted + model.stats.rejected),
        lost: row.prompts - r.summary.counts.submitted,
      });
    } finally {
      await model.close();
      await sb.stop();
    }
  }
}

// 4c. Your own code as the target: a Python function whose module takes 300 ms to load (imports, weights),
// 300 prompts, concurrency 8; the python target (workers load it once) against the command target (a process
// and a load per prompt) and the ideal (load + N × call ÷ workers; the function itself returns at once).
if (wanted('owncode')) {
  say('4c. own code: a Python function, 300 ms module load, 300 prompts, concurrency 8 (python target, command target)');
  const dir = tempDir();
  const loadMs = 300;
  writeFileSync(join(dir, 'model.py'), `import time\ntime.sleep(${loadMs / 1000})\n\ndef answer(prompt):\n    return prompt[:200]\n`);
  writeFileSync(join(dir, 'cmd_model.py'), 'import sys\nsys.path.insert(0, sys.argv[1])\nimport model\nsys.stdout.write(model.answer(sys.stdin.read()))\n');
  const sb = await sandboxProcess(['--benchmark-traces', '300']);
  const env = { EVAL_RUNNER_TOKEN: sb.token };
  try {
    const workers = Math.min(8, os.availableParallelism());
    const runs = { python: [], command: [] };
    for (let i = 0; i < 3; i++) {
      runs.python.push(await cliRun(runArgs(sb, ['--target', 'python', '--python-file', join(dir, 'model.py'), '--concurrency', '8', '--state-dir', tempDir()]), env));
      if (i === 0) runs.command.push(await cliRun(runArgs(sb, ['--target', 'command', '--command', `python3 ${join(dir, 'cmd_model.py')} ${dir}`, '--concurrency', '8', '--state-dir', tempDir()]), env));
    }
    for (const r of [...runs.python, ...runs.command]) if (r.summary.submittedNow !== 300) throw new Error(`an own-code run submitted ${r.summary.submittedNow}`);
    // The protocol's own cost: one worker, concurrency 1, a function that returns at once, 2,000 calls.
    const { createPythonTarget } = require(join(ROOT, 'out', 'src', 'core', 'targets', 'python', 'pythonTarget.js'));
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
    results.figures.owncode = {
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
}

// 4d. A batch function (issue 30): a model that answers a batch for about the price of one prompt (a GPU's forward
// pass), 200 ms per call plus 2 ms per prompt, 1,000 prompts on 4 workers at concurrency 128: batches of 32 against
// one prompt per call. The function records each call's size, so the batches reached are the function's own count.
if (wanted('batchfn')) {
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
    results.figures.batchfn = {
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
}

// 4e. The Batch API (issue 30): 10,000 prompts through the sandbox's Batch API (echo model, each batch complete 2 s
// after it is created), against the same prompts live at concurrency 64. The batch's own 2 s is the provider's time;
// what the run adds to it (the upload, the polls, reading the output, the submissions) is the figure.
if (wanted('batchapi')) {
  say('4e. Batch API: 10,000 prompts, batches complete 2 s after creation, vs live calls at c=64');
  const traces = 10_000;
  const sb = await sandboxProcess(['--benchmark-traces', String(traces), '--batch-delay-ms', '2000']);
  const env = { EVAL_RUNNER_TOKEN: sb.token };
  const common = ['--target', 'openai', '--openai-base-url', `${sb.baseUrl}/v1`, '--model', 'gpt-4o-mini', '--concurrency', '64'];
  try {
    const batched = await cliRun(runArgs(sb, [...common, '--batch', '--state-dir', tempDir()]), env);
    const live = await cliRun(runArgs(sb, [...common, '--state-dir', tempDir()]), env);
    for (const r of [batched, live]) if (r.summary.submittedNow !== traces) throw new Error(`a Batch API bench run submitted ${r.summary.submittedNow}`);
    results.figures.batchapi = {
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
}

// 5. 100,000 traces.
if (wanted('scale')) {
  say('5. scale: 100,000 traces (list + validate, a whole run, resume over the finished journal)');
  const sb = await sandboxProcess(['--benchmark-traces', '100000']);
  const { createApiClient } = require(join(ROOT, 'out', 'src', 'api', 'client.js'));
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
    results.figures.scale = {
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
}

// 5b. Text of a realistic size (issue 28): 100,000 prompts of 2 KB, the echo target answering 2 KB. The store keeps
// where texts are in the journal, an index beside it opens it: the run, status and a run with nothing left to do.
if (wanted('scale2k')) {
  say('5b. scale2k: 100,000 traces of 2 KB prompts and answers (run, status, a run with nothing to do)');
  const sb = await sandboxProcess(['--benchmark-traces', '100000', '--prompt-bytes', '2048']);
  try {
    const stateDir = tempDir();
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    const args = runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]);
    const run = await cliRun(args, env);
    if (run.summary.submittedNow !== 100_000) throw new Error(`the 2 KB run submitted ${run.summary.submittedNow}`);
    const statusArgs = ['status', '--base-url', sb.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    // The first status after the run may write the index; the figures are those of the next ones.
    await cliMeasured(statusArgs, env);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await cliMeasured(statusArgs, env));
    const noops = [];
    for (let i = 0; i < 3; i++) noops.push(await cliRun(args, env));
    const journal = findFiles(stateDir, '.jsonl');
    results.figures.scale2k = {
      traces: 100_000,
      promptBytes: 2048,
      runMs: run.summary.durationMs,
      tracesPerSecond: tracesPerSecond(run),
      runPeakRssMB: run.maxRssMB,
      journalBytes: journal.reduce((n, f) => n + statSync(f).size, 0),
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
}

// 5c. 600,000 prompts of 1 KB (a list of about 620 MB): the run completes within its memory goal.
if (wanted('scale600k')) {
  say('5c. scale600k: 600,000 traces of 1 KB prompts (a run)');
  const sb = await sandboxProcess(['--benchmark-traces', '600000', '--prompt-bytes', '1024', '--max-body-bytes', String(64 * 1024 * 1024)]);
  try {
    const stateDir = tempDir();
    const run = await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]), { EVAL_RUNNER_TOKEN: sb.token });
    results.figures.scale600k = { traces: 600_000, submitted: run.summary.submittedNow, code: run.code, runMs: run.summary.durationMs, runPeakRssMB: run.maxRssMB, tracesPerSecond: tracesPerSecond(run) };
  } finally {
    await sb.stop();
  }
}

// 5d. A list of any size: 600,000 prompts of 1 KB (about 620 MB), made up by the sandbox as it sends them, read by
// the client in a process of its own that keeps nothing (its peak RSS is the list reader's own cost).
if (wanted('list')) {
  say('5d. list: 600,000 prompts of 1 KB (about 620 MB), streamed to a sink that keeps nothing');
  const server = spawn(process.execPath, ['-e', `require(${JSON.stringify(join(ROOT, 'out', 'src', 'sandbox', 'server.js'))}).startSandbox({ port: 0, generatedList: { evaluationId: 11, traces: 600000, promptBytes: 1000 } }).then((s) => console.log(JSON.stringify({ baseUrl: s.baseUrl, token: s.token })))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const sb = await new Promise((resolve, reject) => {
      let text = '';
      server.stdout.on('data', (c) => {
        text += c;
        if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))));
      });
      server.on('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
    });
    const reader = `const { createApiClient } = require(${JSON.stringify(join(ROOT, 'out', 'src', 'api', 'client.js'))});
      const c = createApiClient({ baseUrl: process.env.B, token: process.env.T });
      const t0 = performance.now();
      let count = 0, batches = 0;
      c.streamPrompts('benchmark', 11, (b) => { count += b.length; batches++; return Promise.resolve(); })
        .then(async (r) => { const ms = performance.now() - t0; await c.close(); console.log(JSON.stringify({ count, batches, ms, peakRssMB: process.resourceUsage().maxRSS / 1024 })); });`;
    const r = spawnSync(process.execPath, ['-e', reader], { encoding: 'utf8', env: { ...process.env, B: sb.baseUrl, T: sb.token } });
    if (r.status !== 0) throw new Error(`the list reader failed: ${r.stderr}`);
    results.figures.list = JSON.parse(r.stdout.trim().split('\n').pop());
  } finally {
    server.kill('SIGTERM');
  }
}

// 9. The HTML report of 100,000 traces: how long `report` takes, how large the file is, and its first render in
// Chromium (from navigation start to the page's own mark once everything is drawn).
if (wanted('report')) {
  say('9. report: eval-runner report of 100,000 traces; size, time to write, first render in Chromium');
  if (!editorReady()) throw new Error('the editor set-up (Chromium) failed');
  const sb = await sandboxProcess(['--benchmark-traces', '100000']);
  try {
    const stateDir = tempDir();
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]), env);
    const out = join(tempDir(), 'report.html');
    const writes = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, 'report', '--base-url', sb.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir, '--out', out], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`report failed: ${r.stderr}`);
      writes.push(performance.now() - t0);
    }
    const { launchBrowser } = await import('../test/harness/workbench.mjs');
    const renders = [];
    for (let i = 0; i < 3; i++) {
      const browser = await launchBrowser(tempDir('eval-runner-bench-report-'));
      try {
        const page = await browser.newPage();
        await page.goto(`file://${out}`);
        await page.locator('body[data-rendered="true"]').waitFor({ timeout: 120_000 });
        renders.push(await page.evaluate(() => performance.getEntriesByName('evalRunner:reportRendered')[0].startTime));
      } finally {
        await browser.close();
      }
    }
    results.figures.report = { traces: 100_000, bytes: statSync(out).size, writeMs: median(writes), writeRunsMs: writes.map(Math.round), firstRenderMs: median(renders), firstRenderRunsMs: renders.map(Math.round) };
  } finally {
    await sb.stop();
  }
}

// 10. The same 100,000-trace run in the editor and in the CLI: an echo target at concurrency 64 against the
// sandbox, each timed by its own run summary (from listing to the last submission), the editor's read from its log;
// in the editor with the sidebar's tree and Process Details open, as a user watches a run (BENCH_NO_VIEW=1 and
// BENCH_NO_PANEL=1 leave them closed, to tell their cost from the extension host's own). This machine's speed
// moves by a fifth between minutes, so the two alternate over BENCH_ROUNDS rounds (3), each with a fresh sandbox,
// and the ratio is the median of the rounds'. The CPU each process spent (from /proc) says where the time went.
if (wanted('editorrun')) {
  say('10. editorrun: a 100,000-trace echo run in the extension host and in the CLI, concurrency 64, alternating');
  if (!editorReady()) throw new Error('the editor set-up failed');
  const pack = spawnSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`packaging failed: ${pack.stdout}${pack.stderr}`);
  const rounds = [];
  for (let i = 0; i < Number(process.env.BENCH_ROUNDS ?? 3); i++) {
    const round = await editorRound();
    say(`  round ${i + 1}: editor ${round.editorMs} ms · CLI ${round.cliMs} ms = ${round.ratio.toFixed(2)}×`);
    rounds.push(round);
  }
  const mid = (pick) => median(rounds.map(pick));
  const roles = [...new Set(rounds.flatMap((r) => [...Object.keys(r.cliCpuMs), ...Object.keys(r.editorCpuMs)]))];
  const cpuOf = (side) => Object.fromEntries(roles.map((k) => [k, mid((r) => r[side][k] ?? 0)]).filter(([, v]) => v > 0));
  results.figures.editorRun = {
    traces: 100_000,
    ratio: mid((r) => r.ratio),
    ratios: rounds.map((r) => Number(r.ratio.toFixed(3))),
    editorMs: mid((r) => r.editorMs),
    cliMs: mid((r) => r.cliMs),
    cliCpuMs: cpuOf('cliCpuMs'),
    editorCpuMs: cpuOf('editorCpuMs'),
  };
}

/** The editor's run summary in the extension's log ("Bench 100k: … target calls in N s."), waited for from disk. */
async function runSummaryFrom(wb, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  // The log's path is found once (a walk of the editor's logs folder), then only that file is read each time.
  let log;
  for (;;) {
    log ??= findFiles(join(wb.server.userDataDir, 'logs'), 'Eval Runner.log')[0];
    const line = log && /Bench 100k: .* target calls in ([\d.]+) s\./.exec(readFileSync(log, 'utf8'));
    if (line) return line;
    if (Date.now() > deadline) throw new Error('the editor logged no run summary');
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** One round of the editorrun row: the CLI's run, then the editor's, each against its own fresh sandbox. */
async function editorRound() {
  const { openWorkbench, openView, palette } = await import('../test/e2e/workbenchPage.mjs');
  let cli;
  let cliCpuMs;
  let sb = await sandboxProcess(['--benchmark-traces', '100000']);
  try {
    const cliBefore = cpuByRole();
    cli = await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', tempDir()]), { EVAL_RUNNER_TOKEN: sb.token });
    cliCpuMs = cpuDelta(cliBefore, cpuByRole());
    cliCpuMs.cli = Math.round(cli.cpuMs);
  } finally {
    await sb.stop();
  }
  sb = await sandboxProcess(['--benchmark-traces', '100000']);
  try {
    const wb = await openWorkbench({
      settings: {
        'evalRunner.baseUrl': sb.baseUrl,
        'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Bench 100k' }],
        'evalRunner.target': { type: 'echo' },
        'evalRunner.concurrency': 64,
      },
    });
    try {
      const { page } = wb;
      await setToken(page, sb.token);
      // As a user watches it: the sidebar's tree open, and Process Details showing the run.
      if (!process.env.BENCH_NO_VIEW) await openView(page);
      const editorBefore = cpuByRole();
      const harnessBefore = process.cpuUsage();
      await palette(page, 'Eval Runner: Run Evaluation');
      await pickIfAsked(page, 'Bench 100k');
      if (!process.env.BENCH_NO_PANEL) {
        await palette(page, 'Eval Runner: Show Run Details');
        await pickIfAsked(page, 'Bench 100k');
      }
      // The run's end is read from the extension's log, not the page: asking the page (Playwright polls the DOM
      // four times a second) would put the harness's own work in the editor's renderer while it is measured.
      const line = await runSummaryFrom(wb, 300_000);
      const editorCpuMs = cpuDelta(editorBefore, cpuByRole());
      // This process drives the browser (Playwright): what it spends is the harness's, not the editor's.
      const harness = process.cpuUsage(harnessBefore);
      editorCpuMs.harness = Math.round((harness.user + harness.system) / 1000);
      if (!/100000\/100000 submitted/.test(line[0])) throw new Error(`the editor's run did not submit every trace: ${line[0]}`);
      const editorMs = Number(line[1]) * 1000;
      return { cliMs: cli.summary.durationMs, editorMs, ratio: editorMs / cli.summary.durationMs, cliCpuMs, editorCpuMs };
    } finally {
      await wb.close();
    }
  } finally {
    await sb.stop();
  }
}

// 10b. The editor at 100,000 traces × 2 KB (issue 28): two runs journaled by the CLI (echo, then a Python function
// that answers in capitals, so every answer differs), then in code-server: the extension host's RSS before and after
// Run Details opens the evaluation, a verdict given with G / B in Run Details until the journal has it and the row
// shows it, and Compare Runs from asking (the second run picked) until the page has painted its first rows.
if (wanted('editorscale')) {
  say('10b. editorscale: 100,000 traces × 2 KB in the editor (extension host RSS, a verdict, Compare Runs)');
  if (!editorReady()) throw new Error('the editor set-up failed');
  const pack = spawnSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`packaging failed: ${pack.stdout}${pack.stderr}`);
  const sb = await sandboxProcess(['--benchmark-traces', '100000', '--prompt-bytes', '2048']);
  try {
    const stateDir = tempDir();
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    const echo = await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]), env);
    const model = join(tempDir(), 'upper.py');
    writeFileSync(model, 'def answer(prompt):\n    return prompt.upper()\n');
    const upper = await cliRun(runArgs(sb, ['--target', 'python', '--python-file', model, '--concurrency', '64', '--fresh', '--state-dir', stateDir]), env);
    for (const r of [echo, upper]) if (r.summary.submittedNow !== 100_000) throw new Error(`an editorscale run submitted ${r.summary.submittedNow}`);
    const journal = findFiles(stateDir, '.jsonl').sort((x, y) => statSync(y).size - statSync(x).size)[0];
    say(`  journal ${(statSync(journal).size / 2 ** 20).toFixed(0)} MiB (two runs of 100,000 × 2 KB)`);
    results.figures.editorScale = { traces: 100_000, promptBytes: 2048, journalBytes: statSync(journal).size, ...(await editorScale(sb, stateDir, journal)) };
  } finally {
    await sb.stop();
  }
}

/** The extension hosts of this code-server (its processes whose ancestry names its folder), by pid. */
function extensionHostsOf(runDir) {
  const cmdline = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  const parent = (pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  };
  const hosts = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!cmdline(pid).includes('--type=extensionHost')) continue;
      for (let p = parent(pid); p > 1; p = parent(p)) {
        if (cmdline(p).includes(runDir)) {
          hosts.push(Number(pid));
          break;
        }
      }
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return hosts;
}

/** Whether a process has this file open (a link in /proc/<pid>/fd). */
function holdsOpen(pid, file) {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** A process's resident set and its peak so far, in MB (/proc/<pid>/status: VmRSS, VmHWM). */
function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]);
  return { rssMB: kb('VmRSS') / 1024, peakMB: kb('VmHWM') / 1024 };
}

async function editorScale(sb, stateDir, journal) {
  const { openWorkbench, palette, quickPick } = await import('../test/e2e/workbenchPage.mjs');
  const wb = await openWorkbench({
    settings: {
      'evalRunner.baseUrl': sb.baseUrl,
      'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Bench 2k' }],
      'evalRunner.target': { type: 'echo' },
      'evalRunner.stateDir': stateDir,
    },
  });
  try {
    const { page } = wb;
    await setToken(page, sb.token);
    // The extension is active (Set Token ran in it) and nothing has opened the evaluation yet. code-server may run
    // more than one extension host: each is read now, and ours is the one that holds the journal open afterwards.
    await new Promise((r) => setTimeout(r, 3000));
    const hostsBefore = new Map(extensionHostsOf(wb.server.runDir).map((pid) => [pid, rssOf(pid)]));
    const t0 = performance.now();
    await palette(page, 'Eval Runner: Show Run Details');
    await pickIfAsked(page, 'Bench 2k');
    const frame = await waitForFrame(page, (f) => f.evaluate(() => performance.getEntriesByName('evalRunner:painted').length > 0), 120_000);
    const openMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 3000));
    const host = [...hostsBefore.keys()].find((pid) => holdsOpen(pid, journal));
    if (host === undefined) throw new Error(`none of the extension hosts ${[...hostsBefore.keys()].join(', ')} holds the journal open`);
    const before = hostsBefore.get(host);
    const opened = rssOf(host);
    const verdicts = await verdictTimes(page, frame, journal);
    const compare = await compareTimes(page, { palette, quickPick });
    const after = rssOf(host);
    return { hostPid: host, extensionHosts: hostsBefore.size, rssBeforeMB: before.rssMB, rssOpenedMB: opened.rssMB, rssAddedMB: opened.rssMB - before.rssMB, peakOpenedMB: opened.peakMB, rssAfterCompareMB: after.rssMB, peakAfterCompareMB: after.peakMB, openToPaintMs: openMs, ...verdicts, ...compare };
  } finally {
    await wb.close();
  }
}

/**
 * G and B in turn on Run Details' first row, five times: from the key (its keydown in the page) to the journal's
 * growth (an inotify watch here) and to the row's new verdict class (a MutationObserver in the page). The page's
 * times are its performance.timeOrigin + now(), this process's Date.now(): the same clock.
 */
async function verdictTimes(page, frame, journal) {
  const grows = [];
  const watcher = watch(journal, () => grows.push(Date.now()));
  try {
    await frame.evaluate(() => {
      const at = () => performance.timeOrigin + performance.now();
      window.benchVerdicts = { keys: [], shown: [] };
      document.addEventListener('keydown', (e) => (e.key === 'g' || e.key === 'b') && window.benchVerdicts.keys.push(at()), true);
      let last = '';
      new MutationObserver(() => {
        const row = document.querySelector('.row.active');
        const now = row?.classList.contains('verdict-good') ? 'good' : row?.classList.contains('verdict-bad') ? 'bad' : '';
        if (now !== last) {
          last = now;
          window.benchVerdicts.shown.push({ at: at(), verdict: now });
        }
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['class'] });
    });
    await frame.locator('[role="grid"]').focus();
    await page.keyboard.press('ArrowDown');
    await frame.locator('.row.active').waitFor();
    const journaledMs = [];
    const shownMs = [];
    for (let i = 0; i < 6; i++) {
      const key = i % 2 ? 'b' : 'g';
      const want = key === 'g' ? 'good' : 'bad';
      grows.length = 0;
      await page.keyboard.press(key);
      const deadline = Date.now() + 10_000;
      let seen;
      while (Date.now() < deadline) {
        seen = await frame.evaluate((w) => ({ key: window.benchVerdicts.keys.at(-1), shown: window.benchVerdicts.shown.find((s) => s.verdict === w && s.at >= window.benchVerdicts.keys.at(-1)) }), want);
        if (seen.shown && grows.length) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      if (!seen?.shown || !grows.length) throw new Error(`verdict ${i + 1}: ${seen?.shown ? '' : 'never shown'} ${grows.length ? '' : 'never journaled'}`);
      // The first is the session's first write (its journal opened); the figures are the next five.
      if (i > 0) {
        journaledMs.push(Math.round(grows[0] - seen.key));
        shownMs.push(Math.round(seen.shown.at - seen.key));
      }
      await new Promise((r) => setTimeout(r, 700));
    }
    return { verdictJournaledMs: median(journaledMs), verdictShownMs: median(shownMs), verdictJournaledRunsMs: journaledMs, verdictShownRunsMs: shownMs };
  } finally {
    watcher.close();
  }
}

/**
 * Compare Runs from the palette: when it offers the two runs (its first quick pick lists them), and from the second
 * run picked until the page has painted its first rows (its mark; the page's clock is this process's).
 */
async function compareTimes(page, { palette, quickPick }) {
  await palette(page, 'View: Close All Editors');
  // From the command's click (or the evaluation's, where it asks which) to the list of runs: not the palette's typing.
  await palette(page, 'Eval Runner: Compare Runs');
  let t0 = Date.now();
  const runRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'python' }).first();
  const evaluationRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Bench 2k' }).first();
  const first = await Promise.race([runRow.waitFor({ timeout: 60_000 }).then(() => 'runs'), evaluationRow.waitFor({ timeout: 60_000 }).then(() => 'evaluation')]);
  if (first === 'evaluation') {
    await evaluationRow.click();
    t0 = Date.now();
    await runRow.waitFor({ timeout: 60_000 });
  }
  const offeredMs = Date.now() - t0;
  await quickPick(page, 'python');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'echo' }).first();
  await row.waitFor();
  const asked = Date.now();
  await row.click();
  const frame = await waitForFrame(page, (f) => f.evaluate(() => performance.getEntriesByName('evalRunner:compareRows').length > 0), 120_000);
  const mark = await frame.evaluate(() => {
    const m = performance.getEntriesByName('evalRunner:compareRows')[0];
    return { at: performance.timeOrigin + m.startTime, ...m.detail, summary: document.querySelector('.stats')?.textContent };
  });
  return { compareOfferedMs: offeredMs, compareFirstRowsMs: Math.round(mark.at - asked), compareRows: mark.rows, compareLength: mark.length, compareTotal: mark.total, compareSummary: mark.summary };
}

function findFiles(dir, suffix) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? findFiles(join(dir, e.name), suffix) : e.name.endsWith(suffix) ? [join(dir, e.name)] : []));
}

// 7. The extension: bundle size and activation in the real extension host (code-server), 3 fresh hosts.
if (wanted('extension')) {
  say('7. extension: dist/extension.js size; activation in the real extension host (3 fresh hosts)');
  const runs = [];
  if (editorReady()) {
    for (let i = 0; i < 3; i++) {
      const out = join(tempDir(), 'activation.json');
      const r = spawnSync(process.execPath, [join(ROOT, 'test', 'harness', 'runIntegration.mjs')], {
        encoding: 'utf8',
        env: { ...process.env, EVAL_RUNNER_TESTS_ENTRY: join(ROOT, 'out', 'test', 'bench', 'activation.js'), EVAL_RUNNER_BENCH_OUT: out },
      });
      if (r.status !== 0) throw new Error(`activation run failed: ${r.stdout.slice(-2000)}${r.stderr.slice(-2000)}`);
      runs.push(JSON.parse(readFileSync(out, 'utf8')));
    }
  }
  results.figures.extension = {
    bundleBytes: statSync(join(ROOT, 'dist', 'extension.js')).size,
    activationMs: runs.length ? median(runs.map((r) => r.activationMs)) : undefined,
    activationRunsMs: runs.map((r) => Number(r.activationMs.toFixed(1))),
    // Medians of each phase, in ms: the host before our bundle runs, our bundle's evaluation, the host
    // between it and activate() (the extension context), and activate() itself.
    phasesMs: runs.length
      ? {
          hostBeforeLoad: median(runs.map((r) => r.bundleStartMs)),
          bundleEvaluation: median(runs.map((r) => r.bundleEndMs - r.bundleStartMs)),
          hostContext: median(runs.map((r) => r.activateStartMs - r.bundleEndMs)),
          activate: median(runs.map((r) => r.activateEndMs - r.activateStartMs)),
        }
      : undefined, raw: runs,
    alreadyActive: runs.some((r) => r.wasActive),
    vscode: runs[0]?.vscodeVersion,
  };
}

function editorReady() {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'setupEditor.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return /editor-setup: ready/.test(r.stdout ?? '');
}

// 8. The Process Details webview with 100,000 rows, in the real workbench (code-server + Chromium).
if (wanted('webview')) {
  say('8. webview: 100,000 rows in the real workbench; first render and filters, measured in the browser');
  if (!editorReady()) throw new Error('the editor set-up failed');
  const pack = spawnSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`packaging failed: ${pack.stdout}${pack.stderr}`);
  const { startSandbox } = require(join(ROOT, 'out', 'src', 'sandbox', 'server.js'));
  const { openWorkbench, palette, notification } = await import('../test/e2e/workbenchPage.mjs');
  const sb = await startSandbox({ port: 0, benchmarkTraces: 100_000, token: 'bench-token' });
  const wb = await openWorkbench({
    settings: {
      'evalRunner.baseUrl': sb.baseUrl,
      'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Bench 100k' }],
      'evalRunner.target': { type: 'echo' },
    },
  });
  try {
    const { page } = wb;
    await setToken(page, 'bench-token');
    await palette(page, 'Eval Runner: Fetch Prompts');
    await pickIfAsked(page, 'Bench 100k');
    await notification(page, '100000 prompts fetched', 60_000);
    const t0 = performance.now();
    await palette(page, 'Eval Runner: Show Run Details');
    await pickIfAsked(page, 'Bench 100k');
    const frame = await waitForFrame(page, (f) => f.evaluate(() => performance.getEntriesByName('evalRunner:painted').length > 0), 60_000);
    const openToPaintMs = performance.now() - t0;
    const painted = await frame.evaluate(() => {
      const m = performance.getEntriesByName('evalRunner:painted')[0];
      const first = performance.getEntriesByName('evalRunner:firstRows')[0] ?? m;
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime;
      return { scriptMs: at('evalRunner:script'), firstMessageMs: at('evalRunner:firstMessage'), sinceDocumentMs: m.startTime, firstRowsMs: first.startTime, firstRows: first.detail.rows, rows: m.detail.rows, domRows: document.querySelectorAll('.row').length };
    });
    const filters = {};
    for (const state of ['failed', 'pending', 'all']) {
      filters[state] = await measureAfter(frame, 'evalRunner:filter', () => frame.selectOption('select.filter', state));
    }
    const search = await measureAfter(frame, 'evalRunner:search', () => frame.fill('input[type="search"], input.search', 'variant 7'));
    results.figures.webview = { rows: painted.rows, domRows: painted.domRows, firstRenderMs: painted.firstRowsMs, scriptMs: painted.scriptMs, firstMessageMs: painted.firstMessageMs, firstRenderRows: painted.firstRows, allRowsMs: painted.sinceDocumentMs, commandToAllRowsMs: openToPaintMs, filterMs: filters, searchMs: search };
  } finally {
    await wb.close();
    await sb.close();
  }
}

/** Eval Runner: Set Token in the workbench, as a user types it. */
async function setToken(page, token) {
  const { palette, notification } = await import('../test/e2e/workbenchPage.mjs');
  await palette(page, 'Eval Runner: Set Token');
  await page.locator('.quick-input-widget input[type="password"]').fill(token);
  await page.keyboard.press('Enter');
  await notification(page, 'saved in secret storage');
}

async function pickIfAsked(page, text) {
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
  if (await row.waitFor({ timeout: 2_000 }).then(() => true, () => false)) await row.click();
}

async function waitForFrame(page, test, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const f of page.frames()) if (await test(f).catch(() => false)) return f;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the webview never painted its rows');
}

async function measureAfter(frame, name, action, timeoutMs = 10_000) {
  const before = await frame.evaluate((n) => performance.getEntriesByName(n).length, name);
  await action();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = await frame.evaluate((n) => {
      const all = performance.getEntriesByName(n);
      const last = all[all.length - 1];
      return { count: all.length, ms: last?.duration, shown: last?.detail?.shown };
    }, name);
    if (m.count > before) return { ms: m.ms, shown: m.shown };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no ${name} measure`);
}

// Report.
const f = results.figures;
const TARGETS = [
  ['ceiling', 'sandbox POST capacity (autocannon, 64 conn.)', f.ceiling && `${fmt(f.ceiling.requestsPerSecond)} req/s`, ''],
  ['client', 'client run, echo, 20k traces, c=64', f.client && `${fmt(f.client.tracesPerSecond)} traces/s · ${f.client.ratioToCeiling?.toFixed(2)}× ceiling · ${f.client.cpuMsPerTrace.toFixed(3)} CPU ms/trace`, '≥ 0.7× ceiling', f.client?.ratioToCeiling >= 0.7],
  ['naive', 'naive sequential fetch loop', f.naive && `${fmt(f.naive.tracesPerSecond)} traces/s · client ${f.naive.clientOverNaive?.toFixed(1)}× faster`, '≥ 10×', f.naive?.clientOverNaive >= 10],
  ['latency', '100 ms target, 2,000 traces, c=32', f.latency && `${fmt(f.latency.runMs)} ms vs ideal ${fmt(f.latency.idealMs)} ms = ${f.latency.overIdeal.toFixed(3)}×`, '≤ 1.15× ideal', f.latency?.overIdeal <= 1.15],
  ...(f.ratelimit ?? []).map((r) => [
    'ratelimit',
    `rate limit: ${r.name}`,
    `${fmt(r.runMs)} ms vs ideal ${fmt(r.idealMs)} ms · goodput ${r.goodput.toFixed(2)} · ${r.rejected} × 429 (${(r.rejectedShare * 100).toFixed(1)} %) · ${r.lost} lost`,
    'goodput ≥ 0.9, none lost',
    r.goodput >= 0.9 && r.lost === 0,
  ]),
  ['owncode', 'own code: python target, 300 × 300 ms-load fn, c=8', f.owncode && `${fmt(f.owncode.pythonMs)} ms (${f.owncode.workers} workers; runs ${f.owncode.pythonRunsMs.join(', ')}) vs ideal ${fmt(f.owncode.idealMs)} ms · ${f.owncode.overPromptfoo.toFixed(1)}× promptfoo's 3.1 s`, '≥ 3× promptfoo', f.owncode?.overPromptfoo >= 3],
  ['owncode', 'own code: command target, same workload', f.owncode && `${fmt(f.owncode.commandMs)} ms = ${(f.owncode.commandMs / f.owncode.pythonMs).toFixed(1)}× the python target`, ''],
  ['owncode', 'own code: worker protocol per call (c=1)', f.owncode && `${(f.owncode.protocolMsPerCall * 1000).toFixed(0)} µs`, '< 1 ms', f.owncode?.protocolMsPerCall < 1],
  ['batchfn', 'batch function: 1,000 × (200 ms + 2 ms/prompt), 4 workers', f.batchfn && `batches of 32 ${fmt(f.batchfn.batchMs)} ms (ideal ${fmt(f.batchfn.batchIdealMs)}; ${f.batchfn.calls} calls, mean ${f.batchfn.meanBatch.toFixed(1)}, max ${f.batchfn.maxBatch}) vs one per call ${fmt(f.batchfn.singleMs)} ms (ideal ${fmt(f.batchfn.singleIdealMs)}) = ${f.batchfn.speedup.toFixed(1)}× faster`, '≥ 10×', f.batchfn?.speedup >= 10],
  ['batchapi', 'Batch API: 10,000 prompts, batch done in 2 s', f.batchapi && `${fmt(f.batchapi.batchMs)} ms = the batch's 2,000 + ${fmt(f.batchapi.overheadMs)} ms of ours, submissions included (${f.batchapi.batches} batch, ${(f.batchapi.batchCpuMsPerTrace).toFixed(3)} CPU ms/trace; live c=64 ${fmt(f.batchapi.liveMs)} ms, ${(f.batchapi.liveCpuMsPerTrace).toFixed(3)} CPU ms/trace) · ${fmt(f.batchapi.tokens)} tokens, saved $${f.batchapi.savedUsd.toFixed(4)}`, ''],
  ['scale', '100k: list + validate', f.scale && `${f.scale.listValidateMs.toFixed(1)} ms (${(f.scale.listBytes / 2 ** 20).toFixed(1)} MiB)`, '≤ 150 ms', f.scale?.listValidateMs <= 150],
  ['scale', '100k: whole run peak RSS', f.scale && `${f.scale.peakRssMB.toFixed(0)} MB (${fmt(f.scale.tracesPerSecond)} traces/s)`, '≤ 300 MB', f.scale?.peakRssMB <= 300],
  ['scale', '100k: journal size · resume', f.scale && `${(f.scale.journalBytes / 2 ** 20).toFixed(1)} MiB · resume ${fmt(f.scale.resumeMs)} ms (process ${fmt(f.scale.resumeProcessWallMs)} ms, ${f.scale.resumeSubmitted} resubmitted)`, ''],
  ['scale2k', '100k × 2 KB: run peak RSS', f.scale2k && `${f.scale2k.runPeakRssMB.toFixed(0)} MB (${fmt(f.scale2k.tracesPerSecond)} traces/s, journal ${(f.scale2k.journalBytes / 2 ** 20).toFixed(0)} MiB)`, '≤ 300 MB', f.scale2k?.runPeakRssMB <= 300],
  ['scale2k', '100k × 2 KB: status', f.scale2k && `${fmt(f.scale2k.statusMs)} ms, ${f.scale2k.statusPeakRssMB.toFixed(0)} MB (process; runs ${f.scale2k.statusRunsMs.join(', ')})`, '≤ 500 ms, 150 MB', f.scale2k?.statusMs <= 500 && f.scale2k?.statusPeakRssMB <= 150],
  ['scale2k', '100k × 2 KB: a run with nothing to do', f.scale2k && `${fmt(f.scale2k.noopMs)} ms, ${f.scale2k.noopPeakRssMB.toFixed(0)} MB (process; runs ${f.scale2k.noopRunsMs.join(', ')})`, '≤ 800 ms', f.scale2k?.noopMs <= 800],
  ['scale600k', '600k × 1 KB: run peak RSS', f.scale600k && `${f.scale600k.runPeakRssMB.toFixed(0)} MB (${fmt(f.scale600k.submitted)} submitted, exit ${f.scale600k.code}, ${fmt(f.scale600k.tracesPerSecond)} traces/s)`, '≤ 400 MB', f.scale600k?.runPeakRssMB <= 400 && f.scale600k?.submitted === 600000],
  ['list', '600k × 1 KB list (≈ 620 MB): streamed read', f.list && `${fmt(f.list.count)} items in ${fmt(f.list.ms)} ms · peak RSS ${f.list.peakRssMB.toFixed(0)} MB (the reader alone; was refused over 256 MiB)`, ''],
  ['journal', 'journal on vs off (20k, medians of 3)', f.journal && `${fmt(f.journal.onMs)} vs ${fmt(f.journal.offMs)} ms = ${(f.journal.overhead * 100).toFixed(1)} %`, '≤ 5 %', f.journal?.overhead <= 0.05],
  ['extension', 'dist/extension.js', f.extension && `${(f.extension.bundleBytes / 1024).toFixed(0)} KB`, `≤ ${BUDGETS['dist/extension.js']} KB`, f.extension?.bundleBytes <= BUDGETS['dist/extension.js'] * 1024],
  ['extension', 'activation in the extension host', f.extension?.activationMs !== undefined && `${f.extension.activationMs.toFixed(1)} ms (runs ${f.extension.activationRunsMs.join(', ')})`, '≤ 50 ms', f.extension?.activationMs <= 50],
  ['extension', '  of which: host · bundle · host · activate()', f.extension?.phasesMs && ['hostBeforeLoad', 'bundleEvaluation', 'hostContext', 'activate'].map((k) => `${f.extension.phasesMs[k].toFixed(1)}`).join(' · ') + ' ms (medians)', ''],
  ['webview', 'webview 100k rows: first render', f.webview && `${fmt(f.webview.firstRenderMs)} ms from document start (first ${fmt(f.webview.firstRenderRows)} rows painted; script ran at ${fmt(f.webview.scriptMs)}, first rows arrived at ${fmt(f.webview.firstMessageMs)})`, '≤ 500 ms', f.webview?.firstRenderMs <= 500],
  ['webview', 'webview 100k rows: all rows in', f.webview && `${fmt(f.webview.allRowsMs)} ms from document start (${fmt(f.webview.commandToAllRowsMs)} ms from the command)`, ''],
  ['editorrun', 'editor vs CLI: 100k echo run, c=64', f.editorRun && `${f.editorRun.ratio.toFixed(2)}× (median of ${f.editorRun.ratios.length} rounds: ${f.editorRun.ratios.map((r) => r.toFixed(2)).join(', ')}); editor ${fmt(f.editorRun.editorMs)} ms · CLI ${fmt(f.editorRun.cliMs)} ms`, '≤ 1.05×', f.editorRun?.ratio <= 1.05],
  ['editorscale', '100k × 2 KB in the editor: opening adds', f.editorScale && `${f.editorScale.rssAddedMB.toFixed(0)} MB to the extension host (${f.editorScale.rssBeforeMB.toFixed(0)} → ${f.editorScale.rssOpenedMB.toFixed(0)} MB, peak ${f.editorScale.peakOpenedMB.toFixed(0)} MB; Run Details painted in ${fmt(f.editorScale.openToPaintMs)} ms)`, '≤ 100 MB', f.editorScale?.rssAddedMB <= 100],
  ['editorscale', '100k × 2 KB: a verdict journaled · shown', f.editorScale && `${fmt(f.editorScale.verdictJournaledMs)} ms · ${fmt(f.editorScale.verdictShownMs)} ms (runs ${f.editorScale.verdictShownRunsMs.join(', ')})`, '≤ 50 ms', f.editorScale?.verdictJournaledMs <= 50 && f.editorScale?.verdictShownMs <= 50],
  ['editorscale', '100k × 2 KB: Compare Runs offers the runs', f.editorScale && `${fmt(f.editorScale.compareOfferedMs)} ms (from the command to its list of runs)`, '≤ 1 s', f.editorScale?.compareOfferedMs <= 1000],
  ['editorscale', '100k × 2 KB: Compare Runs to its first rows', f.editorScale && `${fmt(f.editorScale.compareFirstRowsMs)} ms (${f.editorScale.compareRows} rows of ${fmt(f.editorScale.compareLength)} sent, after the second run is picked)`, ''],
  ['report', 'report of 100k traces: size · write', f.report && `${(f.report.bytes / 2 ** 20).toFixed(1)} MiB · ${fmt(f.report.writeMs)} ms (process, runs ${f.report.writeRunsMs.join(', ')})`, ''],
  ['report', 'report of 100k traces: first render', f.report && `${fmt(f.report.firstRenderMs)} ms from navigation start (runs ${f.report.firstRenderRunsMs.join(', ')})`, '≤ 3,000 ms', f.report?.firstRenderMs <= 3000],
  ['webview', 'webview 100k rows: filter · search', f.webview && `${Object.entries(f.webview.filterMs).map(([k, v]) => `${k} ${v.ms.toFixed(1)} ms`).join(', ')} · search ${f.webview.searchMs.ms.toFixed(1)} ms`, ''],
];
function fmt(n) {
  return Math.round(n).toLocaleString('en-US');
}
results.finishedAt = new Date().toISOString();
mkdirSync(join(ROOT, 'bench'), { recursive: true });
writeFileSync(join(ROOT, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
const m = results.machine;
say(`\nEval Runner benchmark · ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}`);
for (const [key, what, value, target, met] of TARGETS) {
  if (!wanted(key) || !value) continue;
  say(`  ${what.padEnd(46)} ${value}${target ? `   [target ${target}: ${met ? 'met' : 'MISSED'}]` : ''}`);
}
say(`\nwritten: bench/results.json`);
