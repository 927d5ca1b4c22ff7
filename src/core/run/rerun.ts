import type { TraceStore } from '../store/traceStore';

/** Which traces to run again after an edit: those that went wrong, by the journal's own account. */
export type RerunSubset = 'failed' | 'bad' | 'noted' | { ids: readonly string[] };

export const RERUN_SUBSETS = ['failed', 'bad', 'noted'] as const;

/** The trace ids of a subset, in list order; ids the evaluation does not have are left out (and counted). */
export function selectTraces(store: TraceStore, subset: RerunSubset): { ids: string[]; unknown: number } {
  if (typeof subset === 'object') {
    const wanted = new Set(subset.ids.map((id) => id.trim()).filter(Boolean));
    const ids = [...store.traces.values()].filter((t) => wanted.has(t.traceId) && t.hasPrompt).map((t) => t.traceId);
    return { ids, unknown: wanted.size - ids.length };
  }
  const ids: string[] = [];
  for (const t of store.traces.values()) {
    if (!t.hasPrompt) continue;
    if (subset === 'failed' ? t.state === 'failed' : subset === 'bad' ? t.rating === 'bad' : t.note !== undefined) ids.push(t.traceId);
  }
  return { ids, unknown: 0 };
}

/** Reads an ids file: one trace id per line (blank lines skipped; ids keep inner spaces). */
export function parseIdsFile(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line.trim() !== '');
}

/**
 * The run each trace's current answer came from, before a rerun replaces it: the comparison afterwards sets
 * the new run beside the run that answered most of them.
 */
export function previousRun(store: TraceStore, ids: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const id of ids) {
    const run = store.get(id)?.answerRun;
    if (run) counts.set(run, (counts.get(run) ?? 0) + 1);
  }
  let best: string | undefined;
  for (const [run, n] of counts) if (best === undefined || n > counts.get(best)!) best = run;
  return best;
}

/** The traces of a subset, counted: "3 failed trace(s)", "2 trace(s) marked bad". */
function subsetWords(subset: RerunSubset, n: number): string {
  if (typeof subset === 'object') return `${n} trace(s) listed in the ids file`;
  return subset === 'failed' ? `${n} failed trace(s)` : subset === 'bad' ? `${n} trace(s) marked bad` : `${n} trace(s) with a note`;
}

/**
 * What a rerun did, in the words every front end shows: "Rerun of 3 failed trace(s): 3 submitted; their previous
 * answers came from run …". `done`: the run's own figures (none: nothing was run).
 */
export function rerunText(
  subset: RerunSubset,
  chosen: { ids: readonly string[]; unknown: number; previousRun?: string | undefined },
  done?: { submittedNow: number; failed: readonly unknown[] },
): string {
  const unknown = chosen.unknown ? ` (${chosen.unknown} id(s) of the file are not in this evaluation)` : '';
  if (chosen.ids.length === 0) {
    const what = typeof subset === 'object' ? 'listed in the ids file' : subset === 'failed' ? 'failed' : subset === 'bad' ? 'marked bad' : 'with a note';
    return `No trace is ${what}${unknown}: nothing to rerun.`;
  }
  const parts: string[] = [];
  if (done) {
    parts.push(`${done.submittedNow} submitted`);
    if (done.failed.length) parts.push(`${done.failed.length} failed again`);
    const left = chosen.ids.length - done.submittedNow - done.failed.length;
    if (left > 0) parts.push(`${left} not submitted`);
  }
  const previous = chosen.previousRun ? `; their previous answers came from run ${chosen.previousRun}` : '';
  return `Rerun of ${subsetWords(subset, chosen.ids.length)}${unknown}${parts.length ? `: ${parts.join(', ')}` : ''}${previous}.`;
}
