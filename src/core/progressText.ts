import type { RunSummary } from './engine';
import type { RunProgress } from './runState';
import { clockTime } from './serviceHold';
import type { HoldEvent } from './serviceHold';
import { skippedNote } from './skipped';
import type { WindowEvents } from './traceStore';

export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
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
  parts.push(`${p.ratePerSecond.toFixed(1)}/s`, `ETA ${formatDuration(p.etaSeconds)}`);
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
  if (s.failed.length > 20) lines.push(`  …and ${s.failed.length - 20} more (see "status" or "export")`);
  if (s.message) lines.push(s.message);
  const skipped = skippedNote(c.skipped);
  if (skipped) lines.push(skipped);
  return lines.join('\n');
}
