import { sleep } from '../../api/retry';
import { isAbortError } from '../../api/errors';
import { commit } from '../store/commit';
import type { Journal } from '../journal/journal';
import type { BatchProgress, RunState } from './runState';
import type { OnTargetError } from '../options/runSettings';
import type { TargetResult } from './targetCalls';
import { FINAL_BATCH_STATES } from '../targets/openai/openaiBatch';
import { budgetText } from '../cost/budget';
import type { Budget } from '../cost/budget';
import { batchSaving } from '../cost/prices';
import type { BatchState, BatchStatus, BatchTarget } from '../targets/openai/openaiBatch';
import { answerOf } from '../targets/openai/openaiTarget';
import { TargetError, readUsage } from '../targets/target';
import type { TargetUsage } from '../targets/target';
import type { BatchInfo, TraceInfo, TraceStore } from '../store/traceStore';

export interface BatchRunParts {
  batch: BatchTarget;
  journal: Journal;
  store: TraceStore;
  run: RunState;
  runId: string | undefined;
  concurrency: number;
  /** Rounds of requests a batch failed for a passing reason (a 5xx, an expired batch) before their traces fail. */
  retries: number;
  onError: OnTargetError;
  /** The engine's path for every answer: journaled, then handed to the submitter. */
  deliver(info: TraceInfo, result: TargetResult): Promise<void>;
  /** A live call through the engine (--batch-fallback live). */
  live(info: TraceInfo): Promise<void>;
  /** --budget: a batch whose estimate would pass it is not sent (budget.ts). */
  budget?: Budget;
}

/** One request a batch did not answer for a passing reason (tried again), in the API's words. */
interface Passing {
  info: TraceInfo;
  reason: string;
}

/** A run's batches: how many, those still open at the provider (a stopped run), the tokens at half price. */
export interface BatchSummary {
  batches: number;
  open: string[];
  promptTokens: number;
  completionTokens: number;
  savedUsd?: number;
}

/** A request's outcome from a batch's files: an answer, or its trace's failure. */
type Settled = Exclude<TargetResult, 'stopped'>;

/** A batch followed by this run: the journal's record, and what the API last said of it. */
interface Followed {
  record: BatchInfo;
  status: BatchStatus | undefined;
}

const STATE_ORDER: ReadonlyArray<BatchProgress['state']> = ['uploading', 'validating', 'in_progress', 'finalizing', 'cancelling'];
/** Error-file codes of requests worth sending again (the batch ran out of time, or the provider failed). */
const PASSING_CODES = new Set(['batch_expired', 'batch_cancelled', 'server_error', 'rate_limit_exceeded', 'timeout']);
/** What a Batch API call gives when the run stops first. */
const STOPPED = Symbol('stopped');

/**
 * The Batch API's run path: the traces to answer go in JSONL files (split at the API's limits), each file's batch is
 * journaled before it is waited for, followed until it ends, and its output and error files matched back by
 * custom_id; every answer then takes the engine's own path (journaled, submitted). Batches a stopped run left open
 * are taken up, never sent again. Requests failed for a passing reason go again (a new batch, or live calls).
 */
export class BatchRun {
  private readonly followed = new Map<string, Followed>();
  private readonly stop = new AbortController();
  private readonly usage = { promptTokens: 0, completionTokens: 0 };
  private uploading = false;
  /** What the batches sent this run are estimated to cost (USD), for the budget. */
  private sentUsd = 0;
  /** Batches this run created or took up. */
  private count = 0;

  constructor(private readonly parts: BatchRunParts) {
    parts.run.onStopping(() => this.stop.abort());
    if (parts.run.stopping) this.stop.abort();
  }

  async run(queue: readonly TraceInfo[]): Promise<void> {
    const { parts } = this;
    const takenUp = await this.takeUp();
    let next = queue.filter((t) => !takenUp.has(t.traceId));
    for (let round = 0; ; round++) {
      if (next.length) await this.send(next);
      const again = await this.followAll();
      if (parts.run.stopping || again.length === 0) break;
      if (round >= parts.retries) {
        await pool(again, parts.concurrency, (p) => parts.deliver(p.info, { fail: p.reason }));
        break;
      }
      parts.run.log('info', `${again.length} request(s) failed for a passing reason (first: ${again[0]!.reason}); ${parts.batch.fallback === 'live' ? 'calling the model live' : 'sending them in a new batch'}.`);
      if (parts.batch.fallback === 'live') {
        await pool(again, parts.concurrency, (p) => parts.live(p.info));
        break;
      }
      next = again.map((p) => p.info);
    }
    this.tellStopped();
  }

  /** What progress shows; undefined before the first batch. */
  progress(): BatchProgress | undefined {
    const open = [...this.followed.values()];
    if (open.length === 0 && !this.uploading) return undefined;
    const states = open.map((f) => f.status?.status ?? 'validating');
    const state = this.uploading ? 'uploading' : STATE_ORDER.find((s) => states.includes(s as BatchState)) ?? states[0] ?? 'validating';
    const saved = batchSaving(this.parts.batch.model, this.usage.promptTokens, this.usage.completionTokens);
    return {
      state,
      batches: open.length,
      completed: open.reduce((n, f) => n + (f.status?.counts.completed ?? 0) + (f.status?.counts.failed ?? 0), 0),
      total: open.reduce((n, f) => n + (f.status?.counts.total || f.record.ids.length), 0),
      ...this.usage,
      ...(saved !== undefined ? { savedUsd: saved } : {}),
    };
  }

  /** What the run's batches came to, for its summary. */
  summary(): BatchSummary {
    const saved = batchSaving(this.parts.batch.model, this.usage.promptTokens, this.usage.completionTokens);
    const open = [...this.followed.values()].filter((f) => f.record.end === undefined && f.record.batch !== undefined).map((f) => f.record.batch!);
    return { batches: this.count, open, ...this.usage, ...(saved !== undefined ? { savedUsd: saved } : {}) };
  }

  /** The journal's open batches, followed again (a batch the stopped run created but did not journal is found by its file). */
  private async takeUp(): Promise<Set<string>> {
    const { store, run } = this.parts;
    const taken = new Set<string>();
    for (const record of store.batches.values()) {
      if (record.end !== undefined) continue;
      const waiting = record.ids.filter((id) => awaitsAnswer(store.get(id)));
      if (waiting.length === 0) {
        await this.end(record, 'settled');
        continue;
      }
      if (record.batch === undefined) {
        const found = await this.api((signal) => this.parts.batch.api.findByFile(record.file, signal));
        if (found === STOPPED) return taken;
        await this.created(record, found ?? (await this.api((signal) => this.parts.batch.api.create(record.file, signal))));
        if (run.stopping) return taken;
      } else {
        this.followed.set(record.file, { record, status: undefined });
        this.count++;
      }
      for (const id of waiting) taken.add(id);
      run.log('info', `Taking up batch ${record.batch ?? record.file} (${waiting.length} trace(s) awaiting answers), left open by an earlier run.`);
    }
    return taken;
  }

  /** Uploads the traces as files within the limits, and creates and journals a batch for each. */
  private async send(traces: readonly TraceInfo[]): Promise<void> {
    const { parts } = this;
    this.uploading = true;
    try {
      for (const file of await this.files(traces)) {
        if (parts.run.stopping) return;
        // The batches sent this run are counted at their estimates: their answers' usage comes only when they end.
        const usd = parts.budget ? file.prompts.reduce((sum, p) => sum + parts.budget!.estimate(p), 0) : 0;
        if (parts.budget && !parts.budget.fits(this.sentUsd + usd)) {
          parts.run.halt('budget', budgetText({ ...parts.budget.state, spent: parts.budget.state.spent + this.sentUsd }));
          return;
        }
        this.sentUsd += usd;
        const fileId = await this.api((signal) => parts.batch.api.upload(file.jsonl, signal));
        if (fileId === STOPPED) return;
        // The traces are journaled with their file before a batch can exist: a stop from here on never sends them twice.
        const record: BatchInfo = { file: fileId, ids: file.ids, batch: undefined, end: undefined, at: Date.now() };
        await commit(parts.journal, parts.store, { t: 'batch', at: record.at, file: fileId, ids: file.ids, ...(parts.runId ? { run: parts.runId } : {}) });
        const created = await this.api((signal) => parts.batch.api.create(fileId, signal));
        await this.created(parts.store.batches.get(fileId) ?? record, created);
      }
    } finally {
      this.uploading = false;
    }
  }

  /** The traces as JSONL files of at most the limits' requests and bytes; a prompt too large for any file fails. */
  private async files(traces: readonly TraceInfo[]): Promise<Array<{ ids: string[]; prompts: string[]; jsonl: Buffer }>> {
    const { batch } = this.parts;
    const files: Array<{ ids: string[]; prompts: string[]; jsonl: Buffer }> = [];
    let ids: string[] = [];
    let prompts: string[] = [];
    let lines: Buffer[] = [];
    let bytes = 0;
    const flush = () => {
      if (ids.length) files.push({ ids, prompts, jsonl: Buffer.concat(lines) });
      ids = [];
      prompts = [];
      lines = [];
      bytes = 0;
    };
    for (const info of traces) {
      const size = () => Buffer.byteLength(batch.api.line(`t${ids.length}`, info.prompt ?? '')) + 1;
      if (size() > batch.limits.maxBytes) {
        await this.parts.deliver(info, { fail: `The prompt is larger than a batch file may be (${batch.limits.maxBytes} bytes).` });
        continue;
      }
      if (ids.length >= batch.limits.maxRequests || bytes + size() > batch.limits.maxBytes) flush();
      const line = Buffer.from(`${batch.api.line(`t${ids.length}`, info.prompt ?? '')}\n`);
      ids.push(info.traceId);
      prompts.push(info.prompt ?? '');
      lines.push(line);
      bytes += line.length;
    }
    flush();
    return files;
  }

  private async created(record: BatchInfo, status: BatchStatus | typeof STOPPED): Promise<void> {
    if (status === STOPPED) return;
    const { parts } = this;
    await commit(parts.journal, parts.store, { t: 'batch', at: Date.now(), file: record.file, batch: status.id });
    this.followed.set(record.file, { record, status });
    this.count++;
    // Each request of a batch is a call of the model (the run's summary counts them).
    parts.run.targetCalls += record.ids.length;
    for (const id of record.ids) if (awaitsAnswer(parts.store.get(id))) parts.store.setTransient(id, 'running');
    parts.run.log('info', `Batch ${status.id} created: ${record.ids.length} request(s) (file ${record.file}).`);
  }

  /** Follows every open batch until it ends (its results delivered) or the run stops; the requests to try again. */
  private async followAll(): Promise<Passing[]> {
    const open = [...this.followed.values()].filter((f) => f.record.end === undefined);
    const again = await Promise.all(open.map((f) => this.follow(f)));
    return again.flat();
  }

  private async follow(followed: Followed): Promise<Passing[]> {
    const { parts } = this;
    let pause = parts.batch.pollMs;
    for (;;) {
      const status = await this.api((signal) => parts.batch.api.get(followed.record.batch!, signal));
      if (status === STOPPED) return [];
      followed.status = status;
      if (FINAL_BATCH_STATES.has(status.status)) {
        const again = await this.read(followed.record, status);
        if (again !== STOPPED) {
          await this.end(followed.record, status.status);
          this.followed.delete(followed.record.file);
          return again;
        }
        return [];
      }
      try {
        await sleep(pause, this.stop.signal);
      } catch {
        return [];
      }
      pause = Math.min(parts.batch.maxPollMs, Math.round(pause * 1.5));
    }
  }

  /** An ended batch's output and error files, matched by custom_id and delivered; the requests to try again. */
  private async read(record: BatchInfo, status: BatchStatus): Promise<Passing[] | typeof STOPPED> {
    const { parts } = this;
    const results = new Map<string, Settled | Passing>();
    for (const fileId of [status.outputFileId, status.errorFileId]) {
      if (!fileId) continue;
      const text = await this.api((signal) => parts.batch.api.content(fileId, signal));
      if (text === STOPPED) return STOPPED;
      for (const line of text.split('\n')) this.match(line, record, results);
    }
    const elapsed = Math.max(0, Date.now() - record.at);
    const again: Passing[] = [];
    const deliveries: Array<[TraceInfo, Settled]> = [];
    for (const id of record.ids) {
      const info = parts.store.get(id);
      if (!info || !awaitsAnswer(info)) continue;
      const result = results.get(id) ?? this.unanswered(status, info);
      if ('reason' in result) again.push(result);
      else deliveries.push([info, 'answer' in result ? { ...result, ms: elapsed } : result]);
    }
    await pool(deliveries, parts.concurrency, ([info, result]) => parts.deliver(info, result));
    return again;
  }

  /** One line of an output or error file (hostile until checked) as its trace's result. */
  private match(line: string, record: BatchInfo, results: Map<string, Settled | Passing>): void {
    if (!line.trim()) return;
    let value: { custom_id?: unknown; response?: { status_code?: unknown; body?: unknown } | null; error?: { code?: unknown; message?: unknown } | null };
    try {
      value = JSON.parse(line) as typeof value;
    } catch {
      return;
    }
    const index = typeof value?.custom_id === 'string' && /^t\d{1,6}$/.test(value.custom_id) ? Number(value.custom_id.slice(1)) : -1;
    const id = record.ids[index];
    const info = id === undefined ? undefined : this.parts.store.get(id);
    if (!info || results.has(info.traceId)) return;
    const code = value.response?.status_code;
    const status = typeof code === 'number' ? code : undefined;
    if (status !== undefined && status >= 200 && status < 300) {
      results.set(info.traceId, this.answer(value.response?.body));
      return;
    }
    const words = this.parts.batch.api.words(JSON.stringify(value.response?.body ?? { error: value.error ?? {} }));
    const passing = status === undefined ? typeof value.error?.code === 'string' && PASSING_CODES.has(value.error.code) : status === 408 || status === 429 || status >= 500;
    const said = `the Batch API ${status !== undefined ? `answered HTTP ${status}` : `said ${this.parts.batch.api.code(value.error?.code) ?? 'error'}`}: ${words}`;
    results.set(info.traceId, passing ? { info, reason: said } : this.refused(said, status));
  }

  private answer(body: unknown): Settled {
    let usage: TargetUsage | undefined;
    try {
      const answer = answerOf(body, { signal: this.stop.signal, timeoutMs: 0, onUsage: (u) => (usage = u) }, 'The Batch API');
      usage ??= readUsage((body as { usage?: unknown } | undefined)?.usage);
      this.usage.promptTokens += usage?.promptTokens ?? 0;
      this.usage.completionTokens += usage?.completionTokens ?? 0;
      return { answer, ms: 0, errorAnswer: false, ...(usage ? { usage } : {}) };
    } catch (error) {
      return this.refused(error instanceof Error ? error.message : String(error), undefined);
    }
  }

  /** A request the API refused (a 4xx): its trace fails in the API's words, or submits fixed words (onTargetError: submit). */
  private refused(said: string, status: number | undefined): Settled {
    if (this.parts.onError === 'submit') return { answer: new TargetError(said, 'failed', status !== undefined ? { status } : {}).submittable, ms: 0, errorAnswer: true };
    return { fail: `Refused: ${said}` };
  }

  /** A trace in neither file: the batch expired or was cancelled before it (passing), or it failed whole (its words). */
  private unanswered(status: BatchStatus, info: TraceInfo): Settled | Passing {
    if (status.status === 'failed') return this.refused(`the Batch API failed the batch ${status.id}: ${status.errors.join('; ') || 'no reason given'}`, undefined);
    return { info, reason: `batch ${status.id} ended ${status.status} before answering it` };
  }

  private async end(record: BatchInfo, end: string): Promise<void> {
    await commit(this.parts.journal, this.parts.store, { t: 'batch', at: Date.now(), file: record.file, end });
  }

  /** A Batch API call; STOPPED when the run stops first. A failure stops the run: open batches stay journaled. */
  private async api<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T | typeof STOPPED> {
    if (this.stop.signal.aborted) return STOPPED;
    try {
      return await fn(this.stop.signal);
    } catch (error) {
      if (this.stop.signal.aborted || isAbortError(error)) return STOPPED;
      const message = error instanceof Error ? error.message : String(error);
      this.parts.run.halt('error', `${message}. The run stopped; batches already created stay at the provider and the journal keeps their ids: run again to take them up.`, error);
      this.stop.abort();
      return STOPPED;
    }
  }

  /** A stopped run says where its open batches are; their traces show as awaiting again. */
  private tellStopped(): void {
    const { parts } = this;
    const open = [...this.followed.values()].filter((f) => f.record.end === undefined && f.record.batch !== undefined);
    for (const f of open) for (const id of f.record.ids) if (parts.store.get(id)?.state === 'running') parts.store.setTransient(id, 'pending');
    if (open.length === 0) return;
    const ids = open.map((f) => f.record.batch!).join(', ');
    parts.run.log('warn', `Stopped following ${open.length} batch(es) (${ids}): they go on at the provider, and the journal keeps their ids. Run the same command again to take them up; nothing is sent twice.`);
  }
}

/** True while a trace still wants an answer from the target (none journaled, or it failed there). */
function awaitsAnswer(info: TraceInfo | undefined): info is TraceInfo {
  return info !== undefined && (info.state === 'pending' || info.state === 'running' || (info.state === 'failed' && info.failedStage === 'target'));
}

/** Runs fn over items, `concurrency` at a time. */
async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, worker));
}

/**
 * Gives up the journal's open batches: each is cancelled at the provider (POST /v1/batches/{id}/cancel) and its
 * record ended "abandoned", so no run takes it up; its traces go to the target again next time. For the editor's
 * Cancel, when the user chose to abandon rather than only stop following.
 */
export async function abandonBatches(batch: BatchTarget, journal: Journal, store: TraceStore, signal: AbortSignal): Promise<string[]> {
  const abandoned: string[] = [];
  for (const record of store.batches.values()) {
    if (record.end !== undefined) continue;
    if (record.batch !== undefined) await batch.api.cancel(record.batch, signal);
    await commit(journal, store, { t: 'batch', at: Date.now(), file: record.file, end: 'abandoned' });
    abandoned.push(record.batch ?? record.file);
  }
  return abandoned;
}
