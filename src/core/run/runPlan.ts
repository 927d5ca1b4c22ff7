import { inShard } from './shards';
import type { Shard } from './shards';
import { identityDifferences } from '../targets/targetSpec';
import type { TargetIdentity } from '../targets/targetSpec';
import type { RunInfo, TraceInfo, TraceStore } from '../store/traceStore';

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

export interface RunPlan {
  /** Journaled answers to submit without calling the target again. */
  submitFirst: TraceInfo[];
  /** Traces to send to the target, in list order. */
  callTarget: TraceInfo[];
  /** Traces that needed the target before --limit cut the list. */
  wanted: number;
}

/** What a run will do, from the store alone: journaled answers are submitted first and never recomputed. */
export function planQueue(store: TraceStore, options: PlanOptions = {}): RunPlan {
  const submitFirst: TraceInfo[] = [];
  const callTarget: TraceInfo[] = [];
  for (const info of store.traces.values()) {
    if (options.only && !options.only.has(info.traceId)) continue;
    if (options.shard && !inShard(info.traceId, options.shard)) continue;
    if (!info.hasPrompt || info.state === 'skipped') continue;
    if (!options.ignoreAnswers && info.state === 'submitted') continue;
    if (!options.ignoreAnswers && hasAnswerToSubmit(info)) {
      if (!options.holdAnswers) submitFirst.push(info);
    } else callTarget.push(info);
  }
  const wanted = callTarget.length;
  if (options.limit !== undefined && callTarget.length > options.limit) callTarget.length = options.limit;
  return { submitFirst, callTarget, wanted };
}

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
