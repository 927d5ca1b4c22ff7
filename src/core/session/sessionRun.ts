import { randomBytes } from 'node:crypto';
import type { ApiClient } from '../../api/client';
import type { JournalReadResult } from '../journal/journal';
import type { EngineOptions, RunSummary } from '../run/engine';
import { engineModule } from '../run/engineLoader';
import { describeConflict, targetConflict } from '../run/runPlan';
import type { RunMode, TargetConflict } from '../run/runPlan';
import type { RunProgress } from '../run/runState';
import { formatShard } from '../run/shards';
import type { TargetIdentity } from '../targets/targetSpec';
import type { LockedJournal } from './storeSync';

/**
 * A run as the session takes it (EvaluationSession.run): EngineOptions without what the session supplies (the
 * evaluation's key, journal and store, its own cancel signals, the run record), adding who answers, the mode and
 * the tool recorded with the run. A host's HostRunRequest adds the target's making to it.
 */
export type SessionRunOptions = Omit<
  EngineOptions,
  'client' | 'kind' | 'evaluationId' | 'journal' | 'store' | 'signal' | 'drainSignal' | 'runRecord'
> & {
  client: ApiClient;
  /** Who answers: recorded with the run, compared with the target of the journaled answers. */
  identity: TargetIdentity;
  /** continue (the default): refuse when the journal's answers came from another target; fresh; reuse. */
  mode?: RunMode;
  /** The tool and version recorded with the run, e.g. "eval-runner-cli 0.2.0". */
  tool?: string;
  /** Use the prompts the journal holds instead of listing again (Run Trace, Retry Failed). */
  reuseFetchedPrompts?: boolean;
  /** Cancels from outside (the CLI's Ctrl-C): drain finishes in-flight traces, abort stops at once. */
  drainSignal?: AbortSignal;
  signal?: AbortSignal;
  /** Told what the journal held when it was opened (a torn last line, lines skipped). */
  onReplay?: (replay: JournalReadResult, path: string) => void;
};

/** A run that did not start because the journal's answers came from another target. */
export interface RefusedRun {
  outcome: 'targetChanged';
  conflict: TargetConflict;
  message: string;
}

/** The run going on in this process: Cancel's two signals, and its end. */
export interface RunningHere {
  drain: AbortController;
  hard: AbortController;
  done: Promise<RunSummary | RefusedRun>;
}

/**
 * One run through the core engine, with the journal's lock held: refused, with nothing done, when the journal's answers
 * came from another target and the mode does not say what to do with them. Its run record names the target and tool.
 */
export async function runOrRefuse(
  { key, journal, store, runId }: LockedJournal & { runId: string },
  options: SessionRunOptions,
  cancel: Pick<RunningHere, 'drain' | 'hard'>,
  /** The session's: it also tells the caller's own onProgress. */
  onProgress: (p: RunProgress) => void,
): Promise<RunSummary | RefusedRun> {
  const { client, reuseFetchedPrompts, onProgress: _p, identity, mode = 'continue', tool, onReplay: _r, drainSignal: _d, signal: _s, ...rest } = options;
  const conflict = targetConflict(store, identity, mode);
  if (conflict) {
    const what = `${key.kind} evaluation ${key.evaluationId}`;
    return { outcome: 'targetChanged' as const, conflict, message: describeConflict(conflict, what) };
  }
  return engineModule().runEvaluation({
    ...rest,
    client,
    kind: key.kind,
    evaluationId: key.evaluationId,
    journal,
    store,
    signal: cancel.hard.signal,
    drainSignal: cancel.drain.signal,
    ...(reuseFetchedPrompts ? { journaledPrompts: true } : {}),
    runRecord: {
      t: 'run',
      at: Date.now(),
      run: runId,
      fp: identity.fingerprint,
      target: identity.description,
      facts: identity.facts,
      ...(tool ? { tool } : {}),
      ...(mode !== 'continue' ? { mode } : {}),
      origin: key.origin,
      kind: key.kind,
      evaluationId: key.evaluationId,
      ...(rest.shard ? { shard: formatShard(rest.shard) } : {}),
      ...(rest.price ? { price: rest.price } : {}),
      ...(rest.budgetUsd !== undefined ? { budget: rest.budgetUsd } : {}),
    },
    onProgress,
  });
}

/** A run id people can read and sort: its start time, and a few random letters. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

/** Cancel from outside reaches the run's own signals; the returned function lets go of the outside ones. */
export function link(drainFrom: AbortSignal | undefined, drain: AbortController, hardFrom: AbortSignal | undefined, hard: AbortController): () => void {
  const onDrain = () => drain.abort();
  const onHard = () => hard.abort();
  if (drainFrom?.aborted) onDrain();
  if (hardFrom?.aborted) onHard();
  drainFrom?.addEventListener('abort', onDrain, { once: true });
  hardFrom?.addEventListener('abort', onHard, { once: true });
  return () => {
    drainFrom?.removeEventListener('abort', onDrain);
    hardFrom?.removeEventListener('abort', onHard);
  };
}
