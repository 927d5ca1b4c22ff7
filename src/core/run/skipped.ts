import { DEFAULT_SKIPPED_ANSWER } from '../options/runSettings';
import type { TraceStore } from '../store/traceStore';

/**
 * Skipped traces, explicitly handled. A skip is local: the service's Completed needs every trace "evaluated or
 * explicitly handled", so an evaluation with a skipped trace never completes there until something is
 * submitted for it. "Submit as Not Answered" sends a fixed text carrying the skip's reason.
 */

/** The text submitted for a skipped trace: the template with {reason} (and {traceId}) filled in. */
export function skippedAnswerText(template: string, reason: string | undefined, traceId: string): string {
  const text = (template.trim() || DEFAULT_SKIPPED_ANSWER).replace(/\{reason\}/g, reason?.trim() || 'skipped').replace(/\{traceId\}/g, traceId);
  return text.slice(0, 10_000);
}

/** The one sentence every front end says while skipped traces are left unanswered. */
export function skippedNote(skipped: number): string | undefined {
  if (skipped === 0) return undefined;
  return `${skipped} trace(s) are skipped: the service cannot complete the evaluation while they are unanswered. Submit them as not answered (CLI: --submit-skipped; editor: Submit as Not Answered).`;
}

/** Traces submitted (or waiting to be) with the not-answered text. */
export function notAnsweredCount(store: TraceStore): number {
  return store.countWith('notAnswered', ['submitted', 'answered', 'failed']);
}
