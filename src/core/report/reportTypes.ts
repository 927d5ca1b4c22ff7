// What a report holds: the data the CLI's `report` embeds in the HTML file for the page's script
// (src/webview/app/report.ts) to read.
import type { Verdict } from '../journal/journalRecords';
import type { Cost } from '../cost/runCost';

/** One trace of the report's table: [traceId, state, prompt, answer, latencyMs, error, verdict, note, runId]. */
export type ReportRow = [
  traceId: string,
  state: string,
  prompt: string,
  answer: string | null,
  latencyMs: number | null,
  error: string | null,
  verdict: Verdict | null,
  note: string | null,
  runId: string | null,
];


export interface ReportRun {
  runId: string;
  target: string;
  shard: string | null;
  startedAt: string;
  endedAt: string | null;
  answered: number;
  submitted: number;
  failed: number;
  /** The target's own time on each answer. */
  latencyMs: { p50: number; p95: number; max: number } | null;
  /** The wait for a free worker or slot before each call, apart from the latency; null when none was measured. */
  queueWaitMs: { p50: number; p95: number; max: number } | null;
  ttftMs: { p50: number; p95: number } | null;
  tokens: { prompt: number; completion: number } | null;
  /** What the run cost (usd null: no usage or no price, and `why`), as status --json gives it. */
  cost: Cost;
  errors: Record<string, number>;
  /** Latencies in equal bins from 0 to the run's max: counts[i] answers took between edges[i] and edges[i+1]. */
  histogram: { edges: number[]; counts: number[] };
  /**
   * Answers journaled and traces failed at the target per bin of binMs from the run's start; errors: the failures
   * and the answers that stand for a target error; limited: the rate limits the target or the service answered with.
   */
  timeline: { startMs: number; binMs: number; answers: number[]; errors: number[]; limited: number[] };
}

export interface ReportData {
  title: string;
  generatedAt: string;
  tool: string;
  evaluation: { kind: string; evaluationId: number; origin: string };
  total: number;
  counts: Record<string, number>;
  notAnswered: number;
  states: string[];
  labels: Record<string, string>;
  runs: ReportRun[];
  rows: ReportRow[];
}
