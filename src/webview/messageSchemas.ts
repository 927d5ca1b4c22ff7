import * as z from 'zod/mini';
import { VERDICTS } from '../core';

/**
 * The host's checks of what the webviews send and save (src/webview/protocol.ts has the types, derived from these).
 * Kept apart from the protocol's types so the front ends, which import those, never bundle zod: a schema is built
 * by a call at load, which a bundler keeps.
 */

const SORT_KEYS = ['state', 'trace', 'latency', 'verdict'] as const;

const traceId = z.string().check(z.maxLength(100_000));
const verdictFilter = z.enum(['all', ...VERDICTS, 'none']);
const sortDirection = z.union([z.literal(1), z.literal(-1)]);
const rowIndex = z.int().check(z.nonnegative(), z.maximum(100_000_000));

export const tableFiltersSchema = z.object({
  stateFilter: z.string().check(z.maxLength(100)),
  verdictFilter,
  search: z.string().check(z.maxLength(10_000)),
  sortKey: z.enum(SORT_KEYS),
  sortDirection,
});

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  /** The table's rows from `start` to `end` under these filters; `activeKey`: the trace whose place the page follows. */
  z.object({ type: z.literal('query'), filters: tableFiltersSchema, activeKey: z.nullable(traceId), start: rowIndex, end: rowIndex }),
  /** The page's active trace, so the host places it when the rows' order changes. */
  z.object({ type: z.literal('active'), traceId }),
  z.object({ type: z.literal('openTrace'), traceId }),
  z.object({ type: z.literal('openProcessDetails') }),
  z.object({ type: z.literal('run') }),
  z.object({ type: z.literal('cancel') }),
  /** Pause, Resume or Concurrency… on the run going on, whoever started it (the host asks for the number). */
  z.object({ type: z.literal('steer'), action: z.enum(['pause', 'resume', 'concurrency']) }),
  /** Rerun Traces; `shown`: the traces the table shows (a filter or search narrowed it), else a choice to make. */
  z.object({ type: z.literal('rerun'), shown: z.boolean() }),
  z.object({ type: z.literal('rendered'), rows: z.int().check(z.nonnegative()), ms: z.number().check(z.nonnegative()) }),
  z.object({ type: z.literal('verdict'), traceId, rating: z.nullable(z.enum(VERDICTS)) }),
  z.object({ type: z.literal('note'), traceId }),
  /** Debug Trace on a row: its prompt through the user's code under the debugger. */
  z.object({ type: z.literal('debug'), traceId }),
  z.object({ type: z.literal('details'), traceId }),
]);

export const runDetailsStateSchema = z.object({
  refId: z.string(),
  stateFilter: z.optional(z.string()),
  verdictFilter: z.optional(verdictFilter),
  search: z.optional(z.string()),
  sortKey: z.optional(z.enum(SORT_KEYS)),
  sortDirection: z.optional(sortDirection),
  showDetails: z.optional(z.boolean()),
  showCharts: z.optional(z.boolean()),
});

export const compareStateSchema = z.object({
  refId: z.string(),
  runA: z.string(),
  runB: z.string(),
  only: z.optional(z.nullable(z.array(traceId).check(z.maxLength(50_000)))),
  onlyDiffering: z.optional(z.boolean()),
  search: z.optional(z.string()),
});

export const compareFiltersSchema = z.object({ onlyDiffering: z.boolean(), search: z.string().check(z.maxLength(10_000)) });

export const compareMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  /** The rows from `start` to `end` under these filters; `activeKey`: the trace whose place the page follows. */
  z.object({ type: z.literal('query'), filters: compareFiltersSchema, activeKey: z.nullable(traceId), start: rowIndex, end: rowIndex }),
  z.object({ type: z.literal('diff'), traceId }),
  z.object({ type: z.literal('submit'), traceId, side: z.enum(['a', 'b']) }),
  /** Carry run `from`'s verdict on the trace over to the other run, whose answer is the same (the host checks). */
  z.object({ type: z.literal('carryVerdict'), traceId, from: z.enum(['a', 'b']) }),
]);
