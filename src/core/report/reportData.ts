import type { ReportData, ReportRow, ReportRun } from './reportTypes';
import { runStats } from './runStats';
import { notAnsweredCount } from '../run/skipped';
import { LOCAL_STATES, STATE_LABELS } from '../store/traceStore';
import type { RunInfo, TraceStore } from '../store/traceStore';
import { TOOL_VERSION } from '../version';

const HISTOGRAM_BINS = 30;
const TIMELINE_BINS = 60;

/** Everything the report shows, from the journal's store alone (the same figures as `status --json`). */
export function reportData(store: TraceStore, evaluation: ReportData['evaluation'], now = new Date()): ReportData {
  return { ...reportSummary(store, evaluation, now), rows: [...reportRows(store)] };
}

/** The report's rows one by one: each trace's texts are read from the journal as its row is written. */
export function* reportRows(store: TraceStore): Generator<ReportRow> {
  for (const t of store.traces.values()) yield [t.traceId, t.state, t.prompt ?? '', t.answer ?? null, t.latencyMs ?? null, t.error ?? null, t.rating ?? null, t.note ?? null, t.answerRun ?? null];
}

/** Everything the report shows but its rows. */
export function reportSummary(store: TraceStore, evaluation: ReportData['evaluation'], now = new Date()): Omit<ReportData, 'rows'> {
  return {
    title: `${evaluation.kind} evaluation ${evaluation.evaluationId}`,
    generatedAt: now.toISOString(),
    tool: `eval-runner ${TOOL_VERSION}`,
    evaluation,
    total: store.total,
    counts: { ...store.snapshotCounts() },
    notAnswered: notAnsweredCount(store),
    states: [...LOCAL_STATES],
    labels: { ...STATE_LABELS },
    runs: store.runs.map(reportRun),
  };
}

function reportRun(run: RunInfo): ReportRun {
  const stats = runStats(run);
  return {
    runId: run.runId,
    target: run.target,
    shard: run.shard ?? null,
    startedAt: new Date(run.startedAt).toISOString(),
    endedAt: run.endedAt === undefined ? null : new Date(run.endedAt).toISOString(),
    answered: run.answered,
    submitted: run.submitted,
    failed: run.failed,
    latencyMs: stats.latencyMs ?? null,
    queueWaitMs: stats.queueWaitMs ?? null,
    ttftMs: stats.ttftMs ?? null,
    tokens: stats.tokens ?? null,
    cost: stats.cost,
    errors: stats.errors,
    ...runCharts(run, stats.latencyMs?.max ?? 0),
  };
}

/** A run's latency histogram and answers over time: the report's charts, and Run Details' (live). */
export function runCharts(run: RunInfo, maxLatencyMs = run.latencies.reduce((m, v) => Math.max(m, v), 0)): Pick<ReportRun, 'histogram' | 'timeline'> {
  return { histogram: histogram(run.latencies, maxLatencyMs), timeline: timeline(run) };
}

function histogram(latencies: readonly number[], max: number): ReportRun['histogram'] {
  const width = Math.max(1, Math.ceil((max + 1) / HISTOGRAM_BINS));
  const counts = new Array<number>(HISTOGRAM_BINS).fill(0);
  for (const ms of latencies) counts[Math.min(HISTOGRAM_BINS - 1, Math.floor(ms / width))]!++;
  return { edges: Array.from({ length: HISTOGRAM_BINS + 1 }, (_, i) => i * width), counts };
}

/**
 * The run's answers over its time, as journaled (a later run's answer to a trace does not take it away); a trace that
 * failed at the target counts there too, as an error: it is what the target came to for that trace.
 */
function timeline(run: RunInfo): ReportRun['timeline'] {
  const lastFailure = run.targetFailTimes.reduce((m, v) => Math.max(m, v), run.startedAt);
  const end = run.endedAt ?? Math.max(run.lastAnswerAt ?? run.startedAt, lastFailure);
  const binMs = Math.max(1, Math.ceil((end - run.startedAt + 1) / TIMELINE_BINS));
  const bins = (...series: ReadonlyArray<readonly number[]>) => {
    const counts = new Array<number>(TIMELINE_BINS).fill(0);
    for (const times of series) for (const at of times) counts[Math.max(0, Math.min(TIMELINE_BINS - 1, Math.floor((at - run.startedAt) / binMs)))]!++;
    return counts;
  };
  const failed = run.targetFailTimes;
  return { startMs: run.startedAt, binMs, answers: bins(run.answerTimes, failed), errors: bins(run.errorTimes, failed), limited: bins(run.rateLimitTimes) };
}
