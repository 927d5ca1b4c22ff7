// 10. The same 100,000-trace run in the editor and in the CLI: an echo target at concurrency 64 against the
// sandbox, each timed by its own run summary (from listing to the last submission), the editor's read from its log;
// in the editor with the sidebar's tree and Run Details open, as a user watches a run (BENCH_NO_VIEW=1 and
// BENCH_NO_PANEL=1 leave them closed, to tell their cost from the extension host's own). This machine's speed
// moves by a fifth between minutes, so the two alternate over BENCH_ROUNDS rounds (3), each with a fresh sandbox,
// and the ratio is the median of the rounds'. The CPU each process spent (from /proc) says where the time went.
// code-server is VS Code's remote server: its extension host looks for ports to forward by running `ls -l
// /proc/*/fd/*` and `ps -A` in shells every 2 s or more (a scan takes longer with the run's 64 sockets open), which a
// desktop VS Code window does not do. It is off, as in every test's workbench (remote.autoForwardPortsSource "output"),
// to measure what a desktop user's editor spends; BENCH_PORTS=1 turns it on. BENCH_PANEL_FIRST=1 opens Run Details before the run,
// to tell what opening the panel costs from what it spends following the run.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { editorReady, packageVsix, pickIfAsked, setToken } from './editor.mjs';
import { cpuByRole, cpuDelta } from './procfs.mjs';
import { cliRun, findFiles, median, runArgs, sandboxProcess, say, tempDir } from './processes.mjs';

export const names = ['editorrun'];

export async function measure() {
  const figures = {};
  say('10. editorrun: a 100,000-trace echo run in the extension host and in the CLI, concurrency 64, alternating');
  if (!editorReady()) throw new Error('the editor set-up failed');
  packageVsix();
  const rounds = [];
  for (let i = 0; i < Number(process.env.BENCH_ROUNDS ?? 3); i++) {
    const round = await editorRound();
    // The window's CPU per second of the run too: it draws at a fixed pace, so a run the machine's load stretches
    // costs it more in all, and per second is what compares across rounds and loads.
    const cpu = round.editorCpuMs;
    const perSecond = (/** @type {number | undefined} */ ms) => Math.round((1000 * (ms ?? 0)) / round.editorMs);
    say(
      `  round ${i + 1}: editor ${round.editorMs} ms · CLI ${round.cliMs} ms = ${round.ratio.toFixed(2)}× · CPU ms renderer ${cpu['chromium renderer'] ?? 0}` +
        ` (${perSecond(cpu['chromium renderer'])}/s), extension host ${cpu.extensionHost ?? 0} (${perSecond(cpu.extensionHost)}/s), runner ${cpu.runner ?? 0} against the CLI's ${round.cliCpuMs.cli}`,
    );
    rounds.push(round);
  }
  const mid = (pick) => median(rounds.map(pick));
  const roles = [...new Set(rounds.flatMap((r) => [...Object.keys(r.cliCpuMs), ...Object.keys(r.editorCpuMs)]))];
  const cpuOf = (side) => Object.fromEntries(roles.map((k) => [k, mid((r) => r[side][k] ?? 0)]).filter(([, v]) => v > 0));
  figures.editorRun = {
    traces: 100_000,
    ratio: mid((r) => r.ratio),
    ratios: rounds.map((r) => Number(r.ratio.toFixed(3))),
    editorMs: mid((r) => r.editorMs),
    cliMs: mid((r) => r.cliMs),
    cliCpuMs: cpuOf('cliCpuMs'),
    editorCpuMs: cpuOf('editorCpuMs'),
  };
  return figures;
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

/** Starts a Chromium trace of the workbench's page (and the webviews in its process); stop() writes it to a folder. */
async function startTrace(page) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline,v8.execute,disabled-by-default-v8.cpu_profiler', transferMode: 'ReportEvents' });
  return {
    async stop(folder) {
      const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
      await cdp.send('Tracing.end');
      await done;
      const file = join(folder, `editorrun-${Date.now()}.trace.json`);
      writeFileSync(file, JSON.stringify({ traceEvents: events }));
      return file;
    },
  };
}

/**
 * BENCH_IDLE=1: what the same workbench spends idle (the run ended, its views still open), per second, over 10 s
 * after 5 s of settling: the floor under the window's CPU during a run.
 */
async function idleFloor() {
  await new Promise((r) => setTimeout(r, 5_000));
  const before = cpuByRole();
  await new Promise((r) => setTimeout(r, 10_000));
  const idle = cpuDelta(before, cpuByRole());
  const roles = ['chromium renderer', 'extensionHost', 'extensionHost children', 'chromium gpu-process', 'code-server'];
  return roles.map((role) => `${role} ${Math.round((idle[role] ?? 0) / 10)}`).join(', ');
}

/** The CLI's run of the round, against a fresh sandbox of its own, and the CPU it and the sandbox spent. */
async function cliSide() {
  const sb = await sandboxProcess(['--benchmark-traces', '100000']);
  try {
    const cliBefore = cpuByRole();
    const cli = await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', tempDir()]), { EVAL_RUNNER_TOKEN: sb.token });
    const cliCpuMs = cpuDelta(cliBefore, cpuByRole());
    cliCpuMs.cli = Math.round(cli.cpuMs);
    return { cli, cliCpuMs };
  } finally {
    await sb.stop();
  }
}

/** A command of the palette for the bench's evaluation, as a user runs it. */
async function fromPalette(page, command) {
  const { palette } = await import('../../test/e2e/workbenchPage.mjs');
  await palette(page, command);
  await pickIfAsked(page, 'Bench 100k');
}

/** One round of the editorrun row: the CLI's run, then the editor's, each against its own fresh sandbox. */
async function editorRound() {
  const { openWorkbench, openView } = await import('../../test/e2e/workbenchPage.mjs');
  const { cli, cliCpuMs } = await cliSide();
  const sb = await sandboxProcess(['--benchmark-traces', '100000']);
  try {
    const wb = await openWorkbench({
      settings: {
        'evalRunner.baseUrl': sb.baseUrl,
        'evalRunner.evaluations': [{ evaluationId: 1, kind: 'benchmark', label: 'Bench 100k' }],
        'evalRunner.target': { type: 'echo' },
        'evalRunner.concurrency': 64,
        // The harness's settings turn code-server's port scan off (test/harness/workbench.mjs); BENCH_PORTS=1 turns it on.
        ...(process.env.BENCH_PORTS ? { 'remote.autoForwardPorts': true, 'remote.autoForwardPortsSource': 'process' } : {}),
      },
    });
    try {
      const { page } = wb;
      await setToken(page, sb.token);
      // As a user watches it: the sidebar's tree open, and Run Details showing the run.
      if (!process.env.BENCH_NO_VIEW) await openView(page);
      // BENCH_TRACE=<folder>: a Chromium trace of the run (the renderer's frames, layouts and scripts), for chrome://tracing.
      const trace = process.env.BENCH_TRACE ? await startTrace(page) : undefined;
      const panelFirst = process.env.BENCH_PANEL_FIRST && !process.env.BENCH_NO_PANEL;
      if (panelFirst) {
        await fromPalette(page, 'Eval Runner: Show Run Details');
        await new Promise((r) => setTimeout(r, 2000));
      }
      const editorBefore = cpuByRole();
      const harnessBefore = process.cpuUsage();
      await fromPalette(page, 'Eval Runner: Run Evaluation');
      if (!process.env.BENCH_NO_PANEL && !panelFirst) await fromPalette(page, 'Eval Runner: Show Run Details');
      // The run's end is read from the extension's log, not the page: asking the page (Playwright polls the DOM
      // four times a second) would put the harness's own work in the editor's renderer while it is measured.
      const line = await runSummaryFrom(wb, 300_000);
      const editorCpuMs = cpuDelta(editorBefore, cpuByRole());
      if (trace) say(`  trace: ${await trace.stop(process.env.BENCH_TRACE)}`);
      // This process drives the browser (Playwright): what it spends is the harness's, not the editor's.
      const harness = process.cpuUsage(harnessBefore);
      editorCpuMs.harness = Math.round((harness.user + harness.system) / 1000);
      if (!/100000\/100000 submitted/.test(line[0])) throw new Error(`the editor's run did not submit every trace: ${line[0]}`);
      const editorMs = Number(line[1]) * 1000;
      if (process.env.BENCH_IDLE) say(`  idle after the run, per second: ${await idleFloor()}`);
      return { cliMs: cli.summary.durationMs, editorMs, ratio: editorMs / cli.summary.durationMs, cliCpuMs, editorCpuMs };
    } finally {
      await wb.close();
    }
  } finally {
    await sb.stop();
  }
}
