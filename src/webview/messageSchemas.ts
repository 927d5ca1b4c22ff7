import * as z from 'zod/mini';

/**
 * The host's checks of what the webviews send and save (src/webview/protocol.ts has the types, derived from these).
 * Kept apart from the protocol's types so the front ends, which import those, never bundle zod: a schema is built
 * by a call at load, which a bundler keeps.
 */

const SORT_KEYS = ['state', 'trace', 'latency', 'verdict'] as const;

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

export const progressStateSchema = z.object({
  refId: z.string(),
  stateFilter: z.optional(z.string()),
  verdictFilter: z.optional(z.enum(['all', 'good', 'bad', 'none'])),
  search: z.optional(z.string()),
  sortKey: z.optional(z.enum(SORT_KEYS)),
  sortDirection: z.optional(z.union([z.literal(1), z.literal(-1)])),
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

export const compareMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('diff'), traceId }),
  z.object({ type: z.literal('submit'), traceId, side: z.enum(['a', 'b']) }),
]);
