// The 20,000-trace rows, on one sandbox: its own POST capacity (ceiling), the CLI's echo run against it (client), the
// journal on and off (journal), and a naive sequential fetch loop (naive); rows 1–3 and 6 of the table.
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { cliRun, listOnce, median, runArgs, sandboxProcess, say, tempDir, tracesPerSecond } from './processes.mjs';

export const names = ['ceiling', 'client', 'naive', 'journal'];

export async function measure(wanted) {
  const figures = {};
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
      figures.ceiling = { requestsPerSecond: result.requests.average, non2xx: result.non2xx, errors: result.errors, latencyP99Ms: result.latency.p99 };
    }
    const client = [];
    const noJournal = [];
    if (wanted('client') || wanted('journal')) {
      say('2, 6. client: run --target echo, 20,000 traces, concurrency 64; journal on and off, alternating, 3 each');
      for (let i = 0; i < 3; i++) {
        // Each run's journal removed after it: they stayed in the temporary folder, 18 of them per --against run.
        const stateDir = tempDir();
        client.push(await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--state-dir', stateDir]), env));
        rmSync(stateDir, { recursive: true, force: true });
        noJournal.push(await cliRun(runArgs(sb, ['--target', 'echo', '--concurrency', '64', '--no-journal']), env));
      }
      for (const r of [...client, ...noJournal]) if (r.summary.submittedNow !== 20000) throw new Error(`a run submitted ${r.summary.submittedNow}`);
      const rate = median(client.map(tracesPerSecond));
      figures.client = {
        traces: 20000,
        tracesPerSecond: rate,
        ratioToCeiling: figures.ceiling ? rate / figures.ceiling.requestsPerSecond : undefined,
        cpuMsPerTrace: median(client.map((r) => r.cpuMs / 20000)),
        processWallMs: median(client.map((r) => r.wallMs)),
        peakRssMB: Math.max(...client.map((r) => r.maxRssMB)),
      };
      const on = median(client.map((r) => r.summary.durationMs));
      const off = median(noJournal.map((r) => r.summary.durationMs));
      figures.journal = {
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
      figures.naive = { traces: n, tracesPerSecond: rate, clientOverNaive: figures.client ? figures.client.tracesPerSecond / rate : undefined };
    }
  } finally {
    await sb.stop();
  }
  return figures;
}
