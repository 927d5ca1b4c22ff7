import * as z from 'zod/mini';
import { EVALUATION_KINDS } from '../../api/evaluationKinds';

// The journal's records: one definition, the schema; the type is derived from it. One append-only JSONL file per
// (service origin, kind, evaluation) holds them, one per line; the last record about a trace decides its state.
// Never holds the service token or a target's key: callers only ever hand it trace ids, prompts, answers and
// reasons. A hand-edited or foreign line that does not fit (an answer of null, a record without a trace id) is
// unreadable and never acted on: submitting it would send "null" or a trace "undefined" to the service.
const at = z.number();

/** A reviewer's verdict on an answer (local only, never sent): the one list, which every other place derives from. */
export const VERDICTS = ['good', 'bad'] as const;
export type Verdict = (typeof VERDICTS)[number];
const id = z.string().check(z.minLength(1));

export const journalRecordSchema = z.discriminatedUnion('t', [
  /**
   * The start of a run. `run` is its id, `fp` the fingerprint of its target (see targetIdentity) and `target` its
   * description; `mode` fresh: every answer before it is set aside; reuse: answers of another target kept. Records
   * written before runs had identities carry only `at` and `target`. Only ever read, never acted on.
   */
  z.object({
    t: z.literal('run'),
    at,
    run: z.optional(z.string()),
    fp: z.optional(z.string()),
    target: z.optional(z.string()),
    /** What changes the target's answers, named (see TargetIdentity.facts): a conflict says which differ. */
    facts: z.optional(z.record(z.string(), z.string())),
    tool: z.optional(z.string()),
    mode: z.optional(z.enum(['fresh', 'reuse'])),
    origin: z.optional(z.string()),
    kind: z.optional(z.enum(EVALUATION_KINDS)),
    evaluationId: z.optional(z.number()),
    /** The run's shard, "K/N" (run --shard). */
    shard: z.optional(z.string()),
    /** Its prices in USD per million tokens and where they came from (src/core/cost/prices.ts); none: no price known. */
    price: z.optional(z.object({ src: z.string(), in: z.number(), out: z.number(), cached: z.optional(z.number()), batch: z.optional(z.boolean()) })),
    /** Its budget in USD (--budget), spent across the evaluation's runs. */
    budget: z.optional(z.number()),
  }),
  /**
   * The end of a run; the traces the list gained or lost while it ran (see listAgain in the engine); when the target
   * or the service answered with a rate limit (the first 5,000 times), for the run's timeline.
   */
  z.object({
    t: z.literal('end'),
    run: z.string(),
    at,
    outcome: z.string(),
    appeared: z.optional(z.array(z.string())),
    vanished: z.optional(z.array(z.string())),
    limited: z.optional(z.array(z.number())),
    /** When submissions were held: the service down (outage), or the token refused until a new one came (token). */
    holds: z.optional(z.array(z.object({ kind: z.enum(['outage', 'token']), from: at, to: at, cause: z.string() }))),
    /** A run stopped by its budget: the budget, the spend so far (all runs) and what is left, in USD. */
    budget: z.optional(z.object({ usd: z.number(), spent: z.number(), left: z.number() })),
  }),
  /**
   * A window of the editor attached to the run in its runner process (after a reload, an update, or in a window
   * opened later), or let go of it. Only the run's history; never acted on. Older journals have none.
   */
  z.object({ t: z.literal('window'), run: z.string(), at, ev: z.enum(['attached', 'detached']) }),
  /** The run was paused, resumed, or its concurrency set (`n`) from outside while it went on (run/runSteering.ts). History only. */
  z.object({ t: z.literal('steer'), run: z.string(), at, ev: z.enum(['pause', 'resume', 'concurrency']), n: z.optional(z.number()) }),
  /** The service's prompt list, whole in one line (written before 0.4; read, never written now). */
  z.object({ t: z.literal('prompts'), at, items: z.array(z.object({ traceId: id, content: z.string() })) }),
  /**
   * One listed prompt, new or changed since the journal's last list (the list is journaled as it streams in, a line
   * per prompt, so a 600,000-prompt list is never one line); `list` follows with the list's size.
   */
  z.object({ t: z.literal('item'), id, p: z.string(), at }),
  /** The list's size; `full`: the items journaled before it are the whole list (a store holding a list since knows it). */
  z.object({ t: z.literal('list'), at, total: z.number(), full: z.optional(z.boolean()) }),
  /**
   * An answer from the target (or a reviewer) in run `run`: `ms` the target's latency (its own time), `qw` the wait
   * for a free worker or slot before the call started (kept apart from `ms`), `ft` the time to the first
   * token of a streamed answer, `tp`/`tc` the prompt's and answer's tokens where reported; `err`: the text stands for
   * a target error; `na`: the fixed not-answered text submitted for a skipped trace (Submit as Not Answered); `bs`: how
   * many prompts the call that answered it held (a batch function).
   */
  z.object({
    t: z.literal('answer'),
    id,
    p: z.optional(z.string()),
    a: z.string(),
    at,
    ms: z.optional(z.number()),
    qw: z.optional(z.number()),
    bs: z.optional(z.number()),
    ft: z.optional(z.number()),
    tp: z.optional(z.number()),
    tc: z.optional(z.number()),
    /** Of `tp`, the tokens read from the provider's cache. */
    tk: z.optional(z.number()),
    err: z.optional(z.boolean()),
    na: z.optional(z.boolean()),
    by: z.optional(z.enum(['target', 'user'])),
    run: z.optional(z.string()),
  }),
  /** The service took the answer; `dup`: it answered 409, it already held an answer for the trace ("already at the service"). */
  z.object({ t: z.literal('submitted'), id, at, code: z.optional(z.string()), dup: z.optional(z.boolean()) }),
  /**
   * A reviewer's verdict on one run's answer to the trace (local only, never sent); no rating clears it. `run`: the run
   * whose answer it judged. Written before verdicts named a run, it judged the trace's answer as it stood: the run
   * that answer belongs to (see TraceStore.applyVerdict), the latest run when the trace had none.
   */
  z.object({ t: z.literal('verdict'), id, at, rating: z.optional(z.enum(VERDICTS)), note: z.optional(z.string()), run: z.optional(z.string()) }),
  z.object({ t: z.literal('failed'), id, p: z.optional(z.string()), reason: z.string(), stage: z.enum(['target', 'submit']), at }),
  z.object({ t: z.literal('skipped'), id, reason: z.string(), at }),
  /**
   * A Batch API batch (the openai target with batch: true), keyed by its input file: written once the file is
   * uploaded (`ids`: the traces of its lines in order, custom_id "t<i>" being line i), again once the batch exists
   * (`batch`, before any wait), and once its results are all journaled or it was given up (`end`: its final status, or
   * "abandoned"). A run takes up a batch without an end instead of sending its traces again.
   */
  z.object({
    t: z.literal('batch'),
    at,
    file: id,
    ids: z.optional(z.array(z.string())),
    batch: z.optional(z.string()),
    end: z.optional(z.string()),
    run: z.optional(z.string()),
  }),
]);

export type JournalRecord = z.infer<typeof journalRecordSchema>;

/** One journal line as a record, or undefined when it is not JSON or not a record of a known shape. */
export function parseLine(line: string): JournalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (isFastRecord(value)) return value;
  const parsed = journalRecordSchema.safeParse(value);
  // The parsed copy drops unknown fields; records written by a newer version keep their known meaning.
  return parsed.success ? parsed.data : undefined;
}

/**
 * The two records a run writes per trace and the prompt list, checked by hand (100k-trace journals replay in a
 * fraction of the time); the schema checks every other line. A unit test holds this to the schema: it accepts
 * nothing the schema refuses.
 */
export function isFastRecord(value: unknown): value is JournalRecord {
  return isPlainAnswer(value) || isPlainSubmitted(value) || isPlainItem(value) || isPlainPrompts(value);
}

type Loose = Record<string, unknown>;
const optional = (v: unknown, type: 'string' | 'number' | 'boolean') => v === undefined || typeof v === type;

export function isPlainAnswer(v: unknown): v is Extract<JournalRecord, { t: 'answer' }> {
  const r = v as Loose;
  return (
    typeof v === 'object' && v !== null && r.t === 'answer' && typeof r.id === 'string' && r.id !== '' && typeof r.a === 'string' &&
    typeof r.at === 'number' && optional(r.p, 'string') && optional(r.ms, 'number') && optional(r.qw, 'number') && optional(r.bs, 'number') && optional(r.ft, 'number') && optional(r.tp, 'number') && optional(r.tc, 'number') && optional(r.tk, 'number') && optional(r.err, 'boolean') && optional(r.na, 'boolean') &&
    optional(r.run, 'string') && (r.by === undefined || r.by === 'target' || r.by === 'user')
  );
}

export function isPlainItem(v: unknown): v is Extract<JournalRecord, { t: 'item' }> {
  const r = v as Loose;
  return typeof v === 'object' && v !== null && r.t === 'item' && typeof r.id === 'string' && r.id !== '' && typeof r.p === 'string' && typeof r.at === 'number';
}

export function isPlainPrompts(v: unknown): v is Extract<JournalRecord, { t: 'prompts' }> {
  const r = v as Loose;
  if (typeof v !== 'object' || v === null || r.t !== 'prompts' || typeof r.at !== 'number' || !Array.isArray(r.items)) return false;
  for (const item of r.items as Loose[]) {
    if (typeof item !== 'object' || item === null || typeof item.traceId !== 'string' || item.traceId === '' || typeof item.content !== 'string') return false;
  }
  return true;
}

export function isPlainSubmitted(v: unknown): v is Extract<JournalRecord, { t: 'submitted' }> {
  const r = v as Loose;
  return (
    typeof v === 'object' && v !== null && r.t === 'submitted' && typeof r.id === 'string' && r.id !== '' && typeof r.at === 'number' && optional(r.code, 'string') &&
    optional(r.dup, 'boolean')
  );
}
