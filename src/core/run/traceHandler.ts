import { getEventListeners } from 'node:events';
import { commit } from '../store/commit';
import { isAbortError } from '../../api/errors';
import type { Journal } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import type { RunState } from './runState';
import type { HandedAnswer, Submitter } from './submissions';
import type { TargetCaller, TargetResult } from './targetCalls';
import { hasAnswerToSubmit } from './runPlan';
import type { TraceQueue } from './runPlan';
import type { TraceInfo, TraceStore } from '../store/traceStore';

/**
 * One trace through the run: its answer from the journal or the target, journaled, then handed to the
 * submitter. Each trace in flight has its own controller, fanned out from one listener on the run's signal,
 * so requests and sleeps only ever listen on short-lived signals.
 */
export class TraceHandler {
  private readonly inflight = new Set<AbortController>();
  /**
   * Controllers of traces that ended neither aborted nor listened to, taken again by later traces: making one (its
   * AbortSignal) cost a 20,000-trace run about 100 ms of CPU, a sixth of what it spends more than aa14c05 (issue 36).
   */
  private readonly spare: AbortController[] = [];
  private readonly onHardAbort = () => {
    for (const c of this.inflight) c.abort(this.run.hardSignal.reason);
  };

  constructor(
    private readonly caller: TargetCaller,
    private readonly submitter: Submitter,
    private readonly journal: Journal,
    private readonly store: TraceStore,
    private readonly run: RunState,
    private readonly concurrency: number,
    private readonly holdAnswers: boolean,
    public runId: string | undefined,
    private readonly changed: (info: TraceInfo) => void,
  ) {
    run.hardSignal.addEventListener('abort', this.onHardAbort, { once: true });
  }

  detach(): void {
    this.run.hardSignal.removeEventListener('abort', this.onHardAbort);
  }

  /** One trace to the target and the service; with `given`, an answer (or failure) that came otherwise (a batch's). */
  async handle(info: TraceInfo, given?: TargetResult): Promise<void> {
    const controller = this.spare.pop() ?? new AbortController();
    if (this.run.hardSignal.aborted) controller.abort(this.run.hardSignal.reason);
    this.inflight.add(controller);
    let handedOver = false;
    try {
      const answer = given === undefined ? await this.answer(info, controller.signal) : await this.record(info, given);
      if (answer === 'done' || this.run.halted || controller.signal.aborted) return;
      handedOver = true;
      await this.submitter.handOver(info, answer, controller.signal, () => this.release(controller));
    } finally {
      if (!handedOver) this.release(controller);
    }
  }

  /**
   * The trace is done with its controller: kept for another trace only while nothing can tell the two apart (not
   * aborted, no listener left on its signal), and no more of them than traces in flight at once.
   */
  private release(controller: AbortController): void {
    this.inflight.delete(controller);
    const { signal } = controller;
    if (!signal.aborted && this.spare.length < this.concurrency && getEventListeners(signal, 'abort').length === 0) this.spare.push(controller);
  }

  /** Gets the trace an answer (unless the journal has one); 'done' when there is nothing to submit now. */
  private async answer(info: TraceInfo, signal: AbortSignal): Promise<'done' | HandedAnswer> {
    if (hasAnswerToSubmit(info)) return { durable: undefined };
    this.store.setTransient(info.traceId, 'running');
    this.changed(info);
    let result: TargetResult;
    try {
      result = await this.caller.call(info, signal);
    } catch (error) {
      if (!isAbortError(error) && !signal.aborted) throw error;
      result = 'stopped';
    }
    return this.record(info, result);
  }

  /** Journals the target's answer (or failure); 'done' when there is nothing to submit now. */
  private async record(info: TraceInfo, result: TargetResult): Promise<'done' | HandedAnswer> {
    if (result === 'stopped') {
      this.store.setTransient(info.traceId, 'pending');
      this.changed(info);
      return 'done';
    }
    if ('fail' in result) {
      const record = { t: 'failed' as const, id: info.traceId, reason: result.fail, stage: 'target' as const, at: Date.now() };
      this.run.logFailure(`Trace "${info.traceId}" failed at the target: ${result.fail}`);
      await commit(this.journal, this.store, record);
      this.run.finishedNow++;
      this.changed(info);
      return 'done';
    }
    const record = answerRecord(info.traceId, result, this.runId);
    // The answer is on disk before it is submitted (the submission awaits `durable`): a crash from here on
    // never costs a target call.
    const durable = commit(this.journal, this.store, record);
    // Awaited later (by the submission, or below); a failed write is seen there, not as an unhandled rejection.
    durable.catch(() => undefined);
    this.changed(info);
    // Answers not yet on disk are what a crash would cost in target calls: never more than the window.
    if (this.journal.backlog > this.concurrency) await durable;
    if (this.holdAnswers) {
      await durable;
      this.run.finishedNow++;
      return 'done';
    }
    return { durable, text: result.answer };
  }
}

/**
 * A target's answer as its journal record, the optional fields set only when known, in the journal's order. No copy of
 * the prompt: the list's item record, written before any answer, holds it. Set field by field rather than spread
 * from eight objects made for it: 20,000 answers took a third less CPU to make and write (issue 36).
 */
function answerRecord(id: string, result: Extract<TargetResult, { answer: string }>, runId: string | undefined): Extract<JournalRecord, { t: 'answer' }> {
  const record: Extract<JournalRecord, { t: 'answer' }> = { t: 'answer', id, a: result.answer, at: Date.now(), ms: result.ms };
  if (result.queueMs !== undefined) record.qw = result.queueMs;
  if (result.batchSize !== undefined) record.bs = result.batchSize;
  const usage = result.usage;
  if (usage?.promptTokens !== undefined) record.tp = usage.promptTokens;
  if (usage?.completionTokens !== undefined) record.tc = usage.completionTokens;
  if (usage?.cachedTokens) record.tk = usage.cachedTokens;
  if (result.ttftMs !== undefined) record.ft = result.ttftMs;
  if (result.errorAnswer) record.err = true;
  if (runId) record.run = runId;
  return record;
}

/** Hands the queued traces to `concurrency` loops until the queue is empty or the run stops. */
export async function drain(queue: TraceQueue, traces: TraceHandler, run: RunState, concurrency: number, widen?: (more: (n: number) => void) => void): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (!run.stopping) {
      const info = queue.at(next++);
      if (!info) return;
      await traces.handle(info);
    }
  };
  const loops = Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker);
  // The concurrency raised mid-run (runSteering.ts): more loops, awaited with the first.
  widen?.((n) => {
    while (loops.length < n && next < queue.length) loops.push(worker());
  });
  for (let awaited = 0; awaited < loops.length; ) {
    const now = loops.length;
    await Promise.all(loops.slice(awaited));
    awaited = now;
  }
}
