import type { BatchSummary } from './batchRun';
import type { RunSummary } from './runSummary';
import type { BatchProgress, RunProgress } from './runState';
import { clockTime } from './serviceHold';
import type { HoldEvent } from './serviceHold';
import { skippedNote } from './skipped';
import type { WindowEvents } from '../store/traceStore';

/** "42s", "47m00s", "2h05m": rounded up to whole seconds first, so a part never reads 60 (46m59.5s is 47m00s). */
export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export function progressText(label: string, p: RunProgress): string {
  if (p.phase === 'waiting' && p.waitingReason) return `${label}: waiting for the adversarial prompts (${p.waitingReason})`;
  if (p.phase === 'listing' || p.phase === 'waiting') return `${label}: listing the prompts…`;
  const c = p.counts;
  const parts = [`${c.submitted}/${p.total} submitted`];
  if (c.running) parts.push(`${c.running} running`);
  if (c.answered) parts.push(`${c.answered} responded`);
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  if (p.hold) return `${label}: ${parts.join(' · ')} · ${holdProgressText(p.hold)}`;
  if (p.batch) return `${label}: ${parts.join(' · ')} · ${batchProgressText(p.batch)}`;
  // The ETA is for what this run will do: said against its own share when that is not the whole list.
  const share = p.thisRun && p.thisRun.planned < p.total ? ` for this run's ${p.thisRun.planned - p.thisRun.finished} left of ${p.thisRun.planned}` : '';
  parts.push(`${p.ratePerSecond.toFixed(1)}/s`, `ETA ${formatDuration(p.etaSeconds)}${share}`);
  const held = heldBack(p);
  return `${label}: ${parts.join(' · ')}${held ? ` · ${held}` : ''}`;
}

/** A run whose target is a chat model of the editor, while no window is attached to serve it. */
export const WAITING_FOR_WINDOW = 'waiting for a VS Code window to serve the chat model';

/** What holds a run back, when a rate limit does ("waiting for the model's rate limit: 48 req/s"), or a missing window. */
export function heldBack(p: RunProgress): string | undefined {
  const held: string[] = [];
  if (p.waitingFor === 'window') held.push(WAITING_FOR_WINDOW);
  if (p.targetRateLimit !== undefined) held.push(`waiting for the model's rate limit: ${formatRate(p.targetRateLimit)} req/s`);
  if (p.serviceRateLimit !== undefined) held.push(`waiting for the service's rate limit: ${formatRate(p.serviceRateLimit)} req/s`);
  return held.length ? held.join(' · ') : undefined;
}

/**
 * Submissions held, in the words every front end shows: "service unavailable since 14:02:10 (HTTP 502 Bad Gateway) ·
 * 43 answers waiting · next try in 8 s".
 */
export function holdProgressText(hold: NonNullable<RunProgress['hold']>, now = Date.now()): string {
  const waiting = `${hold.waiting} answer${hold.waiting === 1 ? '' : 's'} waiting`;
  if (hold.kind === 'token') return `paused: ${hold.cause} · ${waiting} · set a new token to go on`;
  const next = hold.nextTryAt !== undefined ? ` · next try in ${Math.max(0, Math.ceil((hold.nextTryAt - now) / 1000))} s` : '';
  return `service unavailable since ${clockTime(hold.since)} (${hold.cause}) · ${waiting}${next}`;
}

/** A hold in a run's history: "service unavailable 14:02:10–14:02:45 (HTTP 502 Bad Gateway)". */
export function holdText(hold: HoldEvent): string {
  const span = `${clockTime(hold.from)}–${clockTime(hold.to)}`;
  return hold.kind === 'token' ? `paused for a new token ${span}` : `service unavailable ${span} (${hold.cause})`;
}

/**
 * Windows in a run's history: "window reattached 2× (last 14:02:10) · window let go 2× (last 14:02:08)". Undefined when
 * no window came or went while the run went on.
 */
export function windowsText(w: WindowEvents | undefined): string | undefined {
  if (!w) return undefined;
  const parts: string[] = [];
  if (w.attached) parts.push(`window reattached ${w.attached}×${w.lastAttachedAt !== undefined ? ` (last ${clockTime(w.lastAttachedAt)})` : ''}`);
  if (w.detached) parts.push(`window closed or reloaded ${w.detached}×${w.lastDetachedAt !== undefined ? ` (last ${clockTime(w.lastDetachedAt)})` : ''}`);
  return parts.length ? parts.join(' · ') : undefined;
}

const BATCH_STATE_WORDS: Readonly<Record<BatchProgress['state'], string>> = {
  uploading: 'uploading',
  validating: 'validating',
  in_progress: 'in progress',
  finalizing: 'finalizing',
  cancelling: 'cancelling',
  completed: 'completed',
  failed: 'failed',
  expired: 'expired',
  cancelled: 'cancelled',
};

/** The Batch API's part of a run's progress: "batch in progress 120 of 500 · saved $0.42" (tokens where no price is known). */
export function batchProgressText(b: BatchProgress): string {
  const what = b.batches > 1 ? `${b.batches} batches` : 'batch';
  const count = b.state === 'in_progress' || b.state === 'finalizing' ? ` ${b.completed} of ${b.total}` : '';
  const tokens = b.promptTokens + b.completionTokens;
  const saved = tokens === 0 ? '' : b.savedUsd !== undefined ? ` · saved ${dollars(b.savedUsd)}` : ` · ${tokens} token(s) at half price`;
  return `${what} ${BATCH_STATE_WORDS[b.state]}${count}${saved}`;
}

/** "Batch API: 2 batch(es), 1,234 tokens at half price (saved $0.01); still open at the provider: batch_…". */
export function batchSummaryText(b: BatchSummary): string {
  const tokens = b.promptTokens + b.completionTokens;
  const saved = b.savedUsd !== undefined ? ` (saved ${dollars(b.savedUsd)})` : '';
  const open = b.open.length ? `; still open at the provider, taken up by the next run: ${b.open.join(', ')}` : '';
  return `Batch API: ${b.batches} batch(es), ${tokens} token(s) at half price${saved}${open}`;
}

/** Dollars, with cents once there are some: small runs save fractions of a cent. */
function dollars(usd: number): string {
  return `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`;
}

function formatRate(perSecond: number): string {
  return perSecond >= 10 ? perSecond.toFixed(0) : perSecond.toFixed(1);
}

export function summaryText(label: string, s: RunSummary): string {
  const c = s.counts;
  // Over the wall time of the whole run (the wait for the prompts included), as a stopwatch would measure it.
  const rate = s.durationMs > 0 ? ((s.submittedNow * 1000) / s.durationMs).toFixed(1) : '0';
  const lines = [
    `${label}: ${c.submitted}/${s.total} submitted (${s.submittedNow} now), ${c.failed} failed, ${c.skipped} skipped, ` +
      `${s.targetCalls} target calls${s.rateLimitedCalls ? ` (${s.rateLimitedCalls} rate-limited)` : ''}, ${(s.durationMs / 1000).toFixed(1)} s (${rate} submitted/s)`,
  ];
  // A reason's first line (a traceback's last words come first): the rest is in status --json and the export.
  for (const f of s.failed.slice(0, 20)) lines.push(`  failed: ${JSON.stringify(f.traceId)}: ${f.reason.split('\n')[0]}`);
  if (s.listChanges?.appeared.length) lines.push(`  the list read again at the end had ${s.listChanges.appeared.length} trace(s) more: run in this run`);
  if (s.listChanges?.vanished.length) {
    const first = s.listChanges.vanished.slice(0, 5).map((id) => JSON.stringify(id)).join(', ');
    lines.push(`  ${s.listChanges.vanished.length} trace(s) are no longer listed by the service (${first}${s.listChanges.vanished.length > 5 ? ', …' : ''}): reported, not failed`);
  }
  for (const h of s.holds ?? []) lines.push(`  ${holdText(h)}`);
  if (s.batch) lines.push(`  ${batchSummaryText(s.batch)}`);
  if (s.failed.length > 20) lines.push(`  …and ${s.failed.length - 20} more (see "status" or "export")`);
  if (s.message) lines.push(s.message);
  const skipped = skippedNote(c.skipped);
  if (skipped) lines.push(skipped);
  return lines.join('\n');
}
