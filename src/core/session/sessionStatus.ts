import { existsSync } from 'node:fs';
import { journalHeld } from '../journal/journalLock';
import { notAnsweredCount } from '../run/skipped';
import type { RunInfo } from '../store/runHistory';
import type { StateCounts, TraceStore } from '../store/traceStore';
import type { StoreSync } from './storeSync';

export interface EvaluationStatus {
  journal: string;
  /** Read as one evaluation (shards): every journal read, and the first traces none of them has done. */
  journals?: string[];
  notDone?: string[];
  total: number;
  /** The journal holds the service's prompt list: false, the total counts only the traces acted on by hand. */
  listed: boolean;
  counts: StateCounts;
  failed: Array<{ traceId: string; reason: string | undefined }>;
  /** Skipped traces submitted (or about to be) with the not-answered text, counted apart. */
  notAnswered: number;
  /** Submitted traces the service already held an answer for (it answered 409), counted apart. */
  alreadyAtService: number;
  runs: RunInfo[];
  /** A live process holds the journal's lock: a run is going on now (the latest run, when it has no end yet). */
  running: boolean;
  /** Runs with no end whose process is gone (killed, a crash, a power cut): none is going on. */
  interrupted: string[];
  tornTail: boolean;
  invalidLines: number;
}

/** Local progress and history, from the store as the journal (and the shards' folders) last left it. */
export function evaluationStatus(sync: StoreSync): EvaluationStatus {
  const store = sync.store;
  const running = journalHeld(sync.journalFile);
  const failed = [...store.inState('failed')].map((t) => ({ traceId: t.traceId, reason: t.error }));
  return {
    journal: sync.journalFile,
    // Only the folders that hold a journal are named (a shard that never ran has none).
    ...(sync.alsoFrom.length ? { journals: sync.journalFiles.filter((f) => existsSync(f)), notDone: notDoneIds(store, 1000) } : {}),
    total: store.total,
    listed: store.promptsRecorded || store.listedTotal !== undefined,
    counts: store.snapshotCounts(),
    failed,
    notAnswered: notAnsweredCount(store),
    alreadyAtService: store.countWith('alreadyAtService', ['submitted']),
    runs: store.runs,
    running,
    interrupted: interruptedRuns(store.runs, running),
    tornTail: sync.tornTail,
    invalidLines: sync.invalidLines,
  };
}

/** The first `max` traces no run has done anything with yet (pending), in list order. */
function notDoneIds(store: TraceStore, max: number): string[] {
  const ids: string[] = [];
  for (const t of store.traces.values()) {
    if (t.state !== 'pending') continue;
    ids.push(t.traceId);
    if (ids.length >= max) break;
  }
  return ids;
}

/**
 * The runs that never ended: all of them, but the latest while a live process holds the journal (it is going on).
 * A run's end record is written as it ends, so one without it was cut short.
 */
export function interruptedRuns(runs: readonly RunInfo[], running: boolean): string[] {
  const last = runs.length - 1;
  return runs.filter((r, i) => r.endedAt === undefined && !(running && i === last)).map((r) => r.runId);
}
