// The processes every row measures: the sandbox and the CLI, each in its own process (as a real service and a real
// user's run would be), with the CLI's own CPU time and peak RSS; and the small helpers the rows share.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../../test/harness/workbench.mjs';

export { ROOT };
/** The checkout every row measures: this one, or another commit's (bench.mjs --against). */
let BUILD = ROOT;
/** The CLI every row runs: the measured checkout's build. */
export let CLI = join(ROOT, 'dist', 'cli.js');

/** The rows measure the build in `root` from now on (its dist/cli.js, for the CLI and the sandbox alike). */
export function measureBuild(root) {
  BUILD = root;
  CLI = join(root, 'dist', 'cli.js');
}

/**
 * A module of the measured checkout's tsc output, for rows that time the core in their own process (the list
 * reader, Compare, the Python protocol). With --against, the other commit's, never this checkout's by mistake.
 */
export const builtModule = (...parts) => join(BUILD, 'out', 'src', ...parts);
const USAGE_PRELOAD = join(ROOT, 'scripts', 'benchUsage.cjs');

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const tempDir = (p = 'eval-runner-bench-') => mkdtempSync(join(os.tmpdir(), p));
export const say = (line) => console.log(line);

/** The CLI's sandbox in its own process (as a real service would be). */
export async function sandboxProcess(args) {
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
export async function cliRun(args, env) {
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
export async function cliMeasured(args, env) {
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

export const runArgs = (sb, extra) => ['run', '--base-url', sb.baseUrl, '--evaluation', '1', '--kind', 'benchmark', ...extra];
export const tracesPerSecond = (r) => r.summary.submittedNow / (r.summary.durationMs / 1000);

export async function listOnce(sb) {
  const res = await fetch(`${sb.baseUrl}/api/evaluation/promptsAll?evaluationId=1`, { headers: { authorization: `Bearer ${sb.token}` } });
  return (await res.json()).data;
}

export function findFiles(dir, suffix) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? findFiles(join(dir, e.name), suffix) : e.name.endsWith(suffix) ? [join(dir, e.name)] : []));
}
