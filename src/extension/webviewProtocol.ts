import * as z from 'zod/mini';
import type { LocalTraceState, StateCounts } from '../core/traceStore';

/**
 * Every message between the Process Details webview and the host. The webview's script (media/progress.js)
 * speaks exactly these shapes; the host validates what it receives, since the page renders adversarial text.
 */

/** One table row, compact so 100,000 rows travel cheaply: [traceId, state, prompt, answer, latencyMs, error]. */
export type RowTuple = [string, LocalTraceState, string, string, number | null, string | null];

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
      waiting: string | null;
    };

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('openTrace'), traceId: z.string().check(z.maxLength(100_000)) }),
  z.object({ type: z.literal('openProcessDetails') }),
  z.object({ type: z.literal('run') }),
  z.object({ type: z.literal('cancel') }),
  z.object({ type: z.literal('rendered'), rows: z.int().check(z.nonnegative()), ms: z.number().check(z.nonnegative()) }),
]);
export type WebviewMessage = z.infer<typeof webviewMessageSchema>;

/** State the webview persists with setState, restored by the serializer after a reload. */
export const panelStateSchema = z.looseObject({ refId: z.string() });
