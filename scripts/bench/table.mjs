// The bench's table: one line per figure, [row, what, value, target, met], in the order printed. A line whose row was
// not run, or whose value is missing, is left out by the caller.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes.mjs';

/** Size budgets (KB of 1,024 bytes), the ones test/unit/layering.test.ts asserts. */
const BUDGETS = JSON.parse(readFileSync(join(ROOT, 'scripts', 'bench', 'budgets.json'), 'utf8'));

export function tableLines(f) {
  return [
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
    ['scale2k', '100k × 2 KB: the first status after the run', f.scale2k?.firstStatusMs !== undefined && `${fmt(f.scale2k.firstStatusMs)} ms (process)`, '≤ 500 ms', f.scale2k?.firstStatusMs <= 500],
    ['scale2k', '100k × 2 KB: status', f.scale2k && `${fmt(f.scale2k.statusMs)} ms, ${f.scale2k.statusPeakRssMB.toFixed(0)} MB (process; runs ${f.scale2k.statusRunsMs.join(', ')})`, '≤ 500 ms, 150 MB', f.scale2k?.statusMs <= 500 && f.scale2k?.statusPeakRssMB <= 150],
    ['scale2k', '100k × 2 KB: a run with nothing to do', f.scale2k && `${fmt(f.scale2k.noopMs)} ms, ${f.scale2k.noopPeakRssMB.toFixed(0)} MB (process; runs ${f.scale2k.noopRunsMs.join(', ')})`, '≤ 800 ms', f.scale2k?.noopMs <= 800],
    ['scale600k', '600k × 1 KB: run peak RSS', f.scale600k && `${f.scale600k.runPeakRssMB.toFixed(0)} MB (${fmt(f.scale600k.submitted)} submitted, exit ${f.scale600k.code}, ${fmt(f.scale600k.tracesPerSecond)} traces/s)`, '≤ 400 MB', f.scale600k?.runPeakRssMB <= 400 && f.scale600k?.submitted === 600000],
    ['steer', '100k echo run listening (steerable) vs not', f.steer && `${fmt(f.steer.listeningTracesPerSecond)} vs ${fmt(f.steer.notListeningTracesPerSecond)} traces/s (${f.steer.cost >= 0 ? `${(f.steer.cost * 100).toFixed(1)} % slower` : `${(-f.steer.cost * 100).toFixed(1)} % faster`} listening) · ${f.steer.cpuMsPerTraceListening.toFixed(3)} vs ${f.steer.cpuMsPerTraceNotListening.toFixed(3)} CPU ms/trace (runs ${f.steer.runsListening.join(', ')} vs ${f.steer.runsNotListening.join(', ')}; load ${f.steer.loadAverageAtStart.toFixed(1)}→${f.steer.loadAverageAtEnd.toFixed(1)})`, ''],
    ['list', '600k × 1 KB list (≈ 620 MB): streamed read', f.list && `${fmt(f.list.count)} items in ${fmt(f.list.ms)} ms · peak RSS ${f.list.peakRssMB.toFixed(0)} MB (the reader alone; was refused over 256 MiB)`, ''],
    ['journal', 'journal on vs off (20k, medians of 3)', f.journal && `${fmt(f.journal.onMs)} vs ${fmt(f.journal.offMs)} ms = ${(f.journal.overhead * 100).toFixed(1)} %`, '≤ 5 %', f.journal?.overhead <= 0.05],
    ['extension', 'dist/extension.js', f.extension && `${(f.extension.bundleBytes / 1024).toFixed(0)} KB`, `≤ ${BUDGETS['dist/extension.js']} KB`, f.extension?.bundleBytes <= BUDGETS['dist/extension.js'] * 1024],
    ['extension', 'activation in the extension host', f.extension?.activationMs !== undefined && `${f.extension.activationMs.toFixed(1)} ms (runs ${f.extension.activationRunsMs.join(', ')})`, '≤ 50 ms', f.extension?.activationMs <= 50],
    ['extension', '  of which: host · bundle · host · activate()', f.extension?.phasesMs && ['hostBeforeLoad', 'bundleEvaluation', 'hostContext', 'activate'].map((k) => `${f.extension.phasesMs[k].toFixed(1)}`).join(' · ') + ' ms (medians)', ''],
    ['webview', 'webview 100k rows: first render', f.webview && `${fmt(f.webview.firstRenderMs)} ms from document start (first ${fmt(f.webview.firstRenderRows)} rows painted; script ran at ${fmt(f.webview.scriptMs)}, first rows arrived at ${fmt(f.webview.firstMessageMs)})`, '≤ 500 ms', f.webview?.firstRenderMs <= 500],
    ['webview', 'webview 100k rows: all rows in', f.webview && `${fmt(f.webview.allRowsMs)} ms from document start (${fmt(f.webview.commandToAllRowsMs)} ms from the command)`, ''],
    ['editorrun', 'editor vs CLI: 100k echo run, c=64', f.editorRun && `${f.editorRun.ratio.toFixed(2)}× (median of ${f.editorRun.ratios.length} rounds: ${f.editorRun.ratios.map((r) => r.toFixed(2)).join(', ')}); editor ${fmt(f.editorRun.editorMs)} ms · CLI ${fmt(f.editorRun.cliMs)} ms`, '≤ 1.1×', f.editorRun?.ratio <= 1.1],
    ['editorrun', '  CPU ms: the window · the run', f.editorRun?.editorCpuMs && `renderer ${fmt(f.editorRun.editorCpuMs['chromium renderer'] ?? 0)} + extension host ${fmt(f.editorRun.editorCpuMs.extensionHost ?? 0)} + GPU ${fmt(f.editorRun.editorCpuMs['chromium gpu-process'] ?? 0)}${f.editorRun.editorCpuMs['extensionHost children'] ? ` + the extension host's children ${fmt(f.editorRun.editorCpuMs['extensionHost children'])}` : ''} · runner ${fmt(f.editorRun.editorCpuMs.runner ?? 0)} against the CLI's ${fmt(f.editorRun.cliCpuMs.cli ?? 0)} (medians)`, ''],
    ['editorscale', '100k × 2 KB in the editor: opening adds', f.editorScale && `${f.editorScale.rssAddedMB.toFixed(0)} MB to the extension host (${f.editorScale.rssBeforeMB.toFixed(0)} → ${f.editorScale.rssOpenedMB.toFixed(0)} MB, peak ${f.editorScale.peakOpenedMB.toFixed(0)} MB; Run Details painted in ${fmt(f.editorScale.openToPaintMs)} ms)`, '≤ 100 MB', f.editorScale?.rssAddedMB <= 100],
    ['editorscale', '100k × 2 KB: a verdict journaled · shown', f.editorScale && `${fmt(f.editorScale.verdictJournaledMs)} ms · ${fmt(f.editorScale.verdictShownMs)} ms (runs ${f.editorScale.verdictShownRunsMs.join(', ')})`, '≤ 50 ms', f.editorScale?.verdictJournaledMs <= 50 && f.editorScale?.verdictShownMs <= 50],
    ['editorscale', '100k × 2 KB: Compare Runs offers the runs', f.editorScale && `${fmt(f.editorScale.compareOfferedMs)} ms (from the command to its list of runs)`, '≤ 1 s', f.editorScale?.compareOfferedMs <= 1000],
    ['editorscale', '100k × 2 KB: Compare Runs to its first rows', f.editorScale && `${fmt(f.editorScale.compareFirstRowsMs)} ms (${f.editorScale.compareRows} rows of ${fmt(f.editorScale.compareLength)} sent, after the second run is picked${f.editorScale.compareWorkerWaitMs === undefined ? '' : `; the page waited ${fmt(f.editorScale.compareWorkerWaitMs)} ms of it for its webview's service worker`})`, ''],
    ['compare', '100k × 2 KB: Compare Runs to its first rows (host)', f.compare && `${fmt(f.compare.firstRowsMs)} ms (median; runs ${f.compare.firstRowsRunsMs.join(', ')}; ${f.compare.rows} rows, ${fmt(f.compare.differing)} differ; peak RSS ${f.compare.peakRssMB.toFixed(0)} MB)`, '≤ 1 s', f.compare?.firstRowsMs <= 1000],
    ['report', 'report of 100k traces: size · write', f.report && `${(f.report.bytes / 2 ** 20).toFixed(1)} MiB · ${fmt(f.report.writeMs)} ms (process, runs ${f.report.writeRunsMs.join(', ')})`, ''],
    ['report', 'report of 100k traces: first render', f.report && `${fmt(f.report.firstRenderMs)} ms from navigation start (runs ${f.report.firstRenderRunsMs.join(', ')})`, '≤ 3,000 ms', f.report?.firstRenderMs <= 3000],
    ['webview', 'webview 100k rows: filter · search', f.webview && `${Object.entries(f.webview.filterMs).map(([k, v]) => `${k} ${v.ms.toFixed(1)} ms`).join(', ')} · search ${f.webview.searchMs.ms.toFixed(1)} ms`, ''],
  ];
}

function fmt(n) {
  return Math.round(n).toLocaleString('en-US');
}
