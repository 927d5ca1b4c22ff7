import { inShard } from './shards';
import type { Shard } from './shards';
import { identityDifferences } from '../targets/targetSpec';
import type { TargetIdentity } from '../targets/targetSpec';
import type { RunInfo, TraceInfo, TraceStore } from '../store/traceStore';
import type { TraceMap } from '../store/traceMap';

/** How a run treats answers journaled by another target. */
export type RunMode = 'continue' | 'fresh' | 'reuse';

export interface PlanOptions {
  /** Handle only these traces (Run Trace, Retry Failed). */
  only?: ReadonlySet<string> | undefined;
  /** Journal answers, submit nothing (--no-submit, review before submitting). */
  holdAnswers?: boolean | undefined;
  /** Plan as if no answer were journaled (a fresh run, before its record sets them aside). */
  ignoreAnswers?: boolean | undefined;
  /** Send at most this many traces to the target (the first ones in list order). */
  limit?: number | undefined;
  /** Only the traces of this shard (run --shard K/N). */
  shard?: Shard | undefined;
}

/** Traces to work through in order, one at a time (drain): an array is one, and so is a plan's queue. */
export interface TraceQueue extends Iterable<TraceInfo> {
  readonly length: number;
  at(k: number): TraceInfo | undefined;
}

/**
 * Planned traces as their rows in the store: a trace's view is made when the queue reaches it and dropped once the
 * trace is done. A view per trace kept for the whole run was 5.8 MB of live heap at 100,000 traces (38 MB at
 * 600,000), and the heap runs half as high again above what it holds (heapGrowth.ts).
 */
class PlannedTraces implements TraceQueue {
  constructor(
    private readonly traces: TraceMap,
    private readonly rows: Int32Array,
  ) {}

  get length(): number {
    return this.rows.length;
  }

  at(k: number): TraceInfo | undefined {
    return k >= 0 && k < this.rows.length ? this.traces.at(this.rows[k]!) : undefined;
  }

  *[Symbol.iterator](): IterableIterator<TraceInfo> {
    for (let k = 0; k < this.rows.length; k++) yield this.at(k)!;
  }
}

export interface RunPlan {
  /** Journaled answers to submit without calling the target again. */
  submitFirst: TraceQueue;
  /** Traces to send to the target, in list order. */
  callTarget: TraceQueue;
  /** Both, the journaled answers first: the run's queue. */
  queue: TraceQueue;
  /** Traces that needed the target before --limit cut the list. */
  wanted: number;
}

/** What a run will do, from the store alone: journaled answers are submitted first and never recomputed. */
export function planQueue(store: TraceStore, options: PlanOptions = {}): RunPlan {
  const { traces } = store;
  const first = new Int32Array(traces.size);
  const call = new Int32Array(traces.size);
  let firsts = 0;
  let calls = 0;
  for (let i = 0; i < first.length; i++) {
    const info = traces.at(i)!;
    if (options.only && !options.only.has(info.traceId)) continue;
    if (options.shard && !inShard(info.traceId, options.shard)) continue;
    if (!info.hasPrompt || info.state === 'skipped') continue;
    if (!options.ignoreAnswers && info.state === 'submitted') continue;
    if (!options.ignoreAnswers && hasAnswerToSubmit(info)) {
      if (!options.holdAnswers) first[firsts++] = i;
    } else call[calls++] = i;
  }
  const wanted = calls;
  if (options.limit !== undefined && calls > options.limit) calls = options.limit;
  // One array of rows, the journaled answers first: each part of the plan is a window on it, none a copy.
  const rows = new Int32Array(firsts + calls);
  rows.set(first.subarray(0, firsts));
  rows.set(call.subarray(0, calls), firsts);
  const part = (from: number, to: number) => new PlannedTraces(traces, rows.subarray(from, to));
  return { submitFirst: part(0, firsts), callTarget: part(firsts, firsts + calls), queue: part(0, firsts + calls), wanted };
}

/** The journal holds an answer to submit for this trace: it is never sent to the target again. */
export function hasAnswerToSubmit(info: TraceInfo): boolean {
  return info.hasAnswer && (info.state === 'answered' || info.failedStage === 'submit');
}

/** Journaled answers that another target gave: who gave them, and how many are submitted. */
export interface TargetConflict {
  requested: TargetIdentity;
  answeredBy: Array<{ run: RunInfo | undefined; target: string; traces: number; submitted: number }>;
  /** The journal's latest run. */
  latest: RunInfo;
  /** Traces that failed (no answer to keep): a rerun of only those with the requested target mixes nothing up. */
  failed: number;
}

/**
 * A run with a target other than the journal's current one would mix two models' answers under one run:
 * refused unless the user says how (fresh or reuse). undefined: no conflict.
 */
export function targetConflict(store: TraceStore, requested: TargetIdentity, mode: RunMode): TargetConflict | undefined {
  const current = store.currentRun;
  const same = (run: RunInfo | undefined) => run !== undefined && (run.fingerprint === requested.fingerprint || (requested.aliases ?? []).includes(run.fingerprint));
  if (mode !== 'continue' || !current || same(current)) return undefined;
  const byRun = new Map<string | undefined, { run: RunInfo | undefined; target: string; traces: number; submitted: number }>();
  for (const info of store.traces.values()) {
    if (!info.hasAnswer || info.answeredBy === 'user') continue;
    const run = store.runById(info.answerRun);
    let entry = byRun.get(info.answerRun);
    if (!entry) byRun.set(info.answerRun, (entry = { run, target: run?.target ?? 'an unrecorded target', traces: 0, submitted: 0 }));
    entry.traces++;
    if (info.state === 'submitted') entry.submitted++;
  }
  // Only answers of a target other than the requested one make a conflict.
  const others = [...byRun.values()].filter((e) => !same(e.run));
  return others.length ? { requested, answeredBy: others, latest: current, failed: store.counts.failed } : undefined;
}

/** The conflict in plain words; each front end adds its own ways on (flags, buttons). */
export function describeConflict(conflict: TargetConflict, what: string): string {
  const lines = conflict.answeredBy.map((e) => {
    const run = e.run ? ` in run ${e.run.runId} (${new Date(e.run.startedAt).toISOString()})` : '';
    return `  ${e.target}${run}: ${e.traces} trace(s), ${e.submitted} submitted, ${e.traces - e.submitted} not yet`;
  });
  // Compared with the run that gave most of the answers: the latest may be a retry that answered none of them.
  const from = answersRun(conflict);
  const differs = from.facts ? identityDifferences(from.facts, conflict.requested.facts) : [];
  const why = from.facts
    ? differs.length ? [`What differs from run ${from.runId}: ${differs.join('; ')}.`] : []
    : [`Run ${from.runId} was recorded by an older version, which did not keep what its target was made of; only its description can be compared.`];
  const failed = conflict.failed ? [`${conflict.failed} trace(s) failed and have no answer: rerunning only those with this target keeps the other answers as they are.`] : [];
  return [`The journaled answers of ${what} came from another target:`, ...lines, `You asked for: ${conflict.requested.description}.`, ...why, ...failed].join('\n');
}

/** The recorded run that gave the most of the conflicting answers; the latest run when none is recorded. */
export function answersRun(conflict: TargetConflict): RunInfo {
  let best: { run: RunInfo | undefined; traces: number } | undefined;
  for (const e of conflict.answeredBy) if (e.run && (!best || e.traces > best.traces)) best = e;
  return best?.run ?? conflict.latest;
}
