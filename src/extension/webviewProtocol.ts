import * as z from 'zod/mini';
import type { LocalTraceState, StateCounts } from '../core/traceStore';

/**
 * Every message between the Process Details webview and the host. The webview's script (media/progress.js)
 * speaks exactly these shapes; the host validates what it receives, since the page renders adversarial text.
 */

/**
 * One table row, compact so 100,000 rows travel cheaply:
 * [traceId, state, prompt preview, answer preview, latencyMs, error, verdict, note].
 */
export type RowTuple = [string, LocalTraceState, string, string, number | null, string | null, 'good' | 'bad' | null, string | null];

export type HostMessage =
  | {
      type: 'init';
      refId: string;
      title: string;
      kind: string;
      evaluationId: number;
      baseUrl: string;
      processDetailsUrl: string;
    }
  | { type: 'rows'; reset: boolean; done: boolean; rows: RowTuple[] }
  | { type: 'update'; rows: RowTuple[] }
  | {
      type: 'progress';
      counts: StateCounts;
      total: number;
      running: boolean;
      ratePerSecond: number;
      etaSeconds: number | null;
      lastError: string | null;
      /** What is left to do that the user should know (skipped traces keep the service from completing). */
      notice: string | null;
      waiting: string | null;
      /** The latest run: who answers, and its latency, tokens and errors so far (live during a run). */
      run: { runId: string; target: string; stats: string } | null;
    }
  /** The full texts of one trace, asked for when the reviewer wants more than the preview. */
  | { type: 'details'; traceId: string; prompt: string; answer: string | null; note: string | null };

const traceId = z.string().check(z.maxLength(100_000));

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('openTrace'), traceId }),
  z.object({ type: z.literal('openProcessDetails') }),
  z.object({ type: z.literal('run') }),
  z.object({ type: z.literal('cancel') }),
  /** Rerun Traces; `shown`: the rows the table shows when a filter or search narrowed it. */
  z.object({ type: z.literal('rerun'), shown: z.nullable(z.array(traceId).check(z.maxLength(50_000))) }),
  z.object({ type: z.literal('rendered'), rows: z.int().check(z.nonnegative()), ms: z.number().check(z.nonnegative()) }),
  z.object({ type: z.literal('verdict'), traceId, rating: z.nullable(z.enum(['good', 'bad'])) }),
  z.object({ type: z.literal('note'), traceId }),
  z.object({ type: z.literal('details'), traceId }),
]);
export type WebviewMessage = z.infer<typeof webviewMessageSchema>;

/** State the webview persists with setState, restored by the serializer after a reload. */
export const panelStateSchema = z.looseObject({ refId: z.string() });

/** Compare Runs: one row per trace either run answered: [traceId, prompt, answer A, answer B, ms A, ms B, differs]. */
export type CompareTuple = [string, string, string | null, string | null, number | null, number | null, boolean];

export type CompareHostMessage = {
  type: 'compare';
  title: string;
  a: { runId: string; target: string };
  b: { runId: string; target: string };
  rows: CompareTuple[];
};

export const compareMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('diff'), traceId }),
  z.object({ type: z.literal('submit'), traceId, side: z.enum(['a', 'b']) }),
]);

/** What the Compare Runs webview persists, restored by its serializer after a reload. */
export const compareStateSchema = z.looseObject({ refId: z.string(), runA: z.string(), runB: z.string() });
