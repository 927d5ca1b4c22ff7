import type { ApiClient, SubmitResult } from '../../api/client';
import { AuthError } from '../../api/errors';
import { commit } from '../store/commit';
import type { Verdict } from '../journal/journalRecords';
import { skippedAnswerText } from '../run/skipped';
import type { LockedJournal } from './storeSync';

/** A reviewer's note is a line or two, not a document. */
export const MAX_NOTE_LENGTH = 2000;

/** Keeps a reviewer's edit of an answer (not submitted yet). */
export async function saveAnswer({ journal, store }: LockedJournal, traceId: string, answer: string): Promise<void> {
  const record = { t: 'answer' as const, id: traceId, a: answer, at: Date.now(), by: 'user' as const };
  await commit(journal, store, record);
}

/**
 * Submits one trace's answer (the given text, or the journaled one). `fromRun`: the text is that run's answer
 * (Compare Runs), journaled as its target's, not as the reviewer's. A new text is journaled only once the service
 * has accepted it: a refused submission (no such trace, too long) records nothing, it only throws its reason.
 */
export async function submitAnswer(
  w: LockedJournal,
  client: ApiClient,
  traceId: string,
  answer?: string,
  fromRun?: string,
): Promise<{ message: string; requestCode: string | undefined }> {
  const info = w.store.get(traceId);
  const text = answer ?? info?.answer;
  if (text === undefined) throw new Error(`Trace "${traceId}" has no answer to submit yet.`);
  const result = await client.submitAnswer(w.key.kind, w.key.evaluationId, traceId, text);
  if (answer !== undefined && answer !== info?.answer) {
    const by = fromRun && w.store.runById(fromRun) ? { run: fromRun } : { by: 'user' as const };
    const record = { t: 'answer' as const, id: traceId, a: answer, at: Date.now(), ...by };
    await commit(w.journal, w.store, record);
  }
  await journalAccepted(w, traceId, result);
  return { message: result.message || result.data, requestCode: result.requestCode };
}

/** One journaled answer to the service, its acceptance journaled. */
async function submitJournaled(w: LockedJournal, client: ApiClient, traceId: string, text: string): Promise<SubmitResult> {
  const result = await client.submitAnswer(w.key.kind, w.key.evaluationId, traceId, text);
  await journalAccepted(w, traceId, result);
  return result;
}

async function journalAccepted({ journal, store }: LockedJournal, traceId: string, result: SubmitResult): Promise<void> {
  const record = { t: 'submitted' as const, id: traceId, at: Date.now(), ...(result.requestCode ? { code: result.requestCode } : {}) };
  await commit(journal, store, record);
}

/**
 * A reviewer's verdict on a run's answer and a note (journaled, never sent); undefined clears. `run`: the run whose
 * answer is judged (Compare Runs carrying a verdict over); by default the run of the trace's current answer.
 */
export async function setVerdict(
  { journal, store }: LockedJournal,
  traceId: string,
  rating: Verdict | undefined,
  note: string | undefined,
  run?: string,
): Promise<void> {
  const trace = store.get(traceId);
  if (!trace) throw new Error(`Trace "${traceId}" is not in this evaluation.`);
  if (run !== undefined && !store.runById(run)) throw new Error(`Run "${run}" is not in this evaluation.`);
  const judged = run ?? trace.answerRun;
  const text = note?.trim().slice(0, MAX_NOTE_LENGTH);
  const record = { t: 'verdict' as const, id: traceId, at: Date.now(), ...(rating ? { rating } : {}), ...(text ? { note: text } : {}), ...(judged ? { run: judged } : {}) };
  await commit(journal, store, record);
}

/**
 * Carries one run's verdict (and note) on a trace over to another run whose answer is the same text (Compare Runs).
 * Refused, with the reason, when the answers differ or there is no verdict to carry.
 */
export async function carryVerdict(w: LockedJournal, traceId: string, from: { run: string; answer: string | undefined }, to: { run: string; answer: string | undefined }): Promise<void> {
  const verdict = w.store.verdictOf(from.run, traceId);
  if (!verdict) throw new Error(`Run ${from.run} has no verdict on ${traceId}.`);
  if (from.answer === undefined || from.answer !== to.answer) throw new Error(`Runs ${from.run} and ${to.run} answered ${traceId} differently.`);
  await setVerdict(w, traceId, verdict.rating, verdict.note, to.run);
}

/**
 * Submit as Not Answered: every skipped trace (and one whose not-answered text was not accepted yet) gets the
 * template's text with its reason, journaled as such (`na`) before it is submitted. A rejected token stops it.
 */
export async function submitSkipped(w: LockedJournal, client: ApiClient, template: string): Promise<{ submitted: number; failed: Array<{ traceId: string; reason: string }> }> {
  const { journal, store } = w;
  const todo = [...store.traces.values()].filter((t) => t.state === 'skipped' || (t.notAnswered && (t.state === 'answered' || t.state === 'failed')));
  const failed: Array<{ traceId: string; reason: string }> = [];
  let submitted = 0;
  for (const t of todo) {
    if (t.state === 'skipped') {
      const record = { t: 'answer' as const, id: t.traceId, a: skippedAnswerText(template, t.error, t.traceId), at: Date.now(), by: 'user' as const, na: true };
      await commit(journal, store, record);
    }
    try {
      await submitJournaled(w, client, t.traceId, t.answer!);
      submitted++;
    } catch (error) {
      if (error instanceof AuthError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      const record = { t: 'failed' as const, id: t.traceId, reason, stage: 'submit' as const, at: Date.now() };
      await commit(journal, store, record);
      failed.push({ traceId: t.traceId, reason });
    }
  }
  return { submitted, failed };
}

export async function skip({ journal, store }: LockedJournal, traceId: string, reason: string): Promise<void> {
  const record = { t: 'skipped' as const, id: traceId, reason, at: Date.now() };
  await commit(journal, store, record);
}
