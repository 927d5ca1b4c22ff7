// A run's steers (pause, resume, concurrency set from outside) as its history says them, briefly: status, Run Details.
import type { RunInfo } from '../store/runHistory';
import { clockTime } from './serviceHold';

type Steer = NonNullable<RunInfo['steers']>[number];

/** The most a line names: a run steered all day says how often, and its last few. */
const SHOWN = 4;

/**
 * "paused 14:02:10–14:02:31 · concurrency 1 at 14:03:00": a pause with the resume that ended it, a pause never
 * resumed, each concurrency set. Undefined when the run was not steered.
 */
export function steersText(steers: readonly Steer[] | undefined): string | undefined {
  if (!steers?.length) return undefined;
  const said: string[] = [];
  let pausedAt: number | undefined;
  for (const s of steers) {
    if (s.ev === 'pause') {
      if (pausedAt === undefined) pausedAt = s.at;
    } else if (s.ev === 'resume') {
      said.push(pausedAt === undefined ? `resumed at ${clockTime(s.at)}` : `paused ${clockTime(pausedAt)}–${clockTime(s.at)}`);
      pausedAt = undefined;
    } else said.push(`concurrency ${s.n ?? '?'} at ${clockTime(s.at)}`);
  }
  if (pausedAt !== undefined) said.push(`paused at ${clockTime(pausedAt)}`);
  const shown = said.slice(-SHOWN).join(' · ');
  return said.length > SHOWN ? `steered ${said.length}×, the last ${SHOWN}: ${shown}` : shown;
}

/** The same for `status --json`: each steer with its time in ISO 8601. */
export function steersJson(steers: readonly Steer[]): Array<{ at: string; ev: Steer['ev']; concurrency?: number }> {
  return steers.map((s) => ({ at: new Date(s.at).toISOString(), ev: s.ev, ...(s.n !== undefined ? { concurrency: s.n } : {}) }));
}
