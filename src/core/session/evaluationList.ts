// Every evaluation the state folders hold, from their journals alone (no network, no token): `eval-runner list` and
// the agents' list_evaluations tell the same listing.
import { listJournals } from '../journal/stateDir';
import type { JournalEntry } from '../journal/stateDir';
import { EvaluationSession } from './session';
import type { EvaluationStatus } from './sessionStatus';

/** One evaluation as `list` tells it. */
export interface ListedEvaluation {
  stateDir: string;
  origin: string;
  kind: string;
  evaluationId: number;
  journal: string;
  traces: number;
  submitted: number;
  failed: number;
  runs: number;
  lastRun: { runId: string; startedAt: string; endedAt: string | null; outcome: string } | null;
  /** A live process holds the journal's lock: a run is going on now. */
  running: boolean;
}

/** Every evaluation in these state folders, in their order. */
export async function listEvaluations(dirs: readonly string[]): Promise<ListedEvaluation[]> {
  const listed: ListedEvaluation[] = [];
  for (const dir of dirs) for (const entry of await listJournals(dir)) listed.push(await listedOf(dir, entry));
  return listed;
}

async function listedOf(stateDir: string, entry: JournalEntry): Promise<ListedEvaluation> {
  const status = await new EvaluationSession({ origin: entry.origin, kind: entry.kind, evaluationId: entry.evaluationId }, stateDir).status();
  return {
    stateDir,
    origin: entry.origin,
    kind: entry.kind,
    evaluationId: entry.evaluationId,
    journal: entry.path,
    traces: status.total,
    submitted: status.counts.submitted,
    failed: status.counts.failed,
    runs: status.runs.length,
    lastRun: lastRunOf(status),
    running: status.running,
  };
}

/** The last run: its id, when, and how it ended (or "going on", or "interrupted" when its process died). */
export function lastRunOf(status: EvaluationStatus): ListedEvaluation['lastRun'] {
  const last = status.runs[status.runs.length - 1];
  if (!last) return null;
  const outcome = last.endedAt !== undefined ? (last.outcome ?? 'ended') : status.interrupted.includes(last.runId) ? 'interrupted' : 'going on';
  return { runId: last.runId, startedAt: new Date(last.startedAt).toISOString(), endedAt: last.endedAt === undefined ? null : new Date(last.endedAt).toISOString(), outcome };
}
