// The cost of steering: a CLI run listens on the runner protocol (eval-runner pause, a window's Run Details), told
// every progress event. A 100,000-trace echo run's rate listening, next to the same run not listening
// (EVAL_RUNNER_BENCH_NO_LISTEN=1, honoured for this row only), alternating, 3 each, on one sandbox.
import { loadavg } from 'node:os';
import { cliRun, median, runArgs, sandboxProcess, say, tempDir, tracesPerSecond } from './processes.mjs';

export const names = ['steer'];

const TRACES = 100_000;
const ROUNDS = 3;

export async function measure() {
  say(`steer: run --target echo, ${TRACES.toLocaleString('en')} traces, concurrency 64; listening and not, alternating, ${ROUNDS} each`);
  const sb = await sandboxProcess(['--benchmark-traces', String(TRACES)]);
  const listening = [];
  const deaf = [];
  const load = loadavg()[0];
  try {
    const env = { EVAL_RUNNER_TOKEN: sb.token };
    const run = (extra) => cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', tempDir()]), { ...env, ...extra });
    for (let i = 0; i < ROUNDS; i++) {
      // Alternating which goes first, so a drift in the machine's load falls on both.
      const first = i % 2 === 0;
      (first ? listening : deaf).push(await run(first ? {} : { EVAL_RUNNER_BENCH_NO_LISTEN: '1' }));
      (first ? deaf : listening).push(await run(first ? { EVAL_RUNNER_BENCH_NO_LISTEN: '1' } : {}));
    }
  } finally {
    await sb.stop();
  }
  for (const r of [...listening, ...deaf]) if (r.summary.submittedNow !== TRACES) throw new Error(`a run submitted ${r.summary.submittedNow}`);
  const on = median(listening.map(tracesPerSecond));
  const off = median(deaf.map(tracesPerSecond));
  return {
    steer: {
      traces: TRACES,
      listeningTracesPerSecond: on,
      notListeningTracesPerSecond: off,
      cost: 1 - on / off,
      cpuMsPerTraceListening: median(listening.map((r) => r.cpuMs / TRACES)),
      cpuMsPerTraceNotListening: median(deaf.map((r) => r.cpuMs / TRACES)),
      runsListening: listening.map((r) => Math.round(tracesPerSecond(r))),
      runsNotListening: deaf.map((r) => Math.round(tracesPerSecond(r))),
      loadAverageAtStart: load,
      loadAverageAtEnd: loadavg()[0],
    },
  };
}
