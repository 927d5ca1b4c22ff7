import { reportData, reportRows, reportSummary } from '../report/reportData';
import { reportChunks } from '../report/renderReport';
import type { ReportPage } from '../report/renderReport';
import type { ReportData } from '../report/reportTypes';
import { formatShard } from '../run/shards';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ApiClient, SubmitResult } from '../../api/client';
import type { PromptItem } from '../../api/schemas';
import { engineModule } from '../run/engineLoader';
import { batchRunModule } from '../run/batchLoader';
import type { BatchTarget } from '../targets/openai/openaiBatch';
import type { EngineOptions, RunSummary } from '../run/engine';
import { commit } from '../journal/commit';
import { ListWriter } from '../journal/listWriter';
import { compareRuns } from '../report/compareRuns';
import type { ComparedTrace } from '../report/compareRuns';
import { exportLines, exportToFile, writePiecesOwnerOnly } from '../report/exportResults';
import { streamPromptsOf } from '../run/promptList';
import type { PromptSink } from '../../api/client';
import type { ExportFormat, ExportOptions } from '../report/exportResults';
import { CHECKED, journalPath, nullJournal, openJournal, readJournal } from '../journal/journal';
import type { Journal, JournalKey, JournalPosition, JournalReadResult, JournalVisitor } from '../journal/journal';
import { JournalText } from '../journal/journalText';
import { readIndex, writeIndex } from '../store/storeIndex';
import type { JournalFs } from '../journal/storage';
import { describeConflict, targetConflict } from '../run/runPlan';
import { previousRun, selectTraces } from '../run/rerun';
import { notAnsweredCount, skippedAnswerText } from '../run/skipped';
import { AuthError } from '../../api/errors';
import type { RerunSubset } from '../run/rerun';
import type { RunMode, TargetConflict } from '../run/runPlan';
import type { TargetIdentity } from '../targets/targetSpec';
import type { RunProgress } from '../run/runState';
import { TraceStore } from '../store/traceStore';
import type { RunInfo, StateCounts } from '../store/traceStore';

export type SessionKey = JournalKey;

/** Journals shorter than this are read whole (milliseconds); the index is kept only past it. */
const INDEX_MIN_GROWTH = 1024 * 1024;

/** A reviewer's note is a line or two, not a document. */
export const MAX_NOTE_LENGTH = 2000;

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

export interface EvaluationStatus {
  journal: string;
  /** Read as one evaluation (shards): every journal read, and the first traces none of them has done. */
  journals?: string[];
  notDone?: string[];
  total: number;
  /** The journal holds the service's prompt list: false, the total counts only the traces acted on by hand. */
  listed: boolean;
  counts: StateCounts;
  failed: Array<{ traceId: string; reason: string | undefined }>;
  /** Skipped traces submitted (or about to be) with the not-answered text, counted apart. */
  notAnswered: number;
  /** Submitted traces the service already held an answer for (it answered 409), counted apart. */
  alreadyAtService: number;
  runs: RunInfo[];
  tornTail: boolean;
  invalidLines: number;
}

/**
 * One evaluation, the one way into the core for the CLI, the extension and the tests: opened from (state
 * dir, service origin, kind, evaluation id), it runs, submits, skips, keeps a reviewer's answer, reports
 * status and runs, and exports. The journal is opened (and locked) only for the length of an operation, so
 * a CLI run and several editor windows can all show the same evaluation and never write it at once.
 */
export class EvaluationSession {
  store = new TraceStore();
  lastProgress: RunProgress | undefined;
  lastSummary: RunSummary | undefined;
  lastRunAt: number | undefined;
  /** Journal lines skipped at the last read: unreadable or not of a known shape (never acted on). */
  invalidLines = 0;
  private tornTail = false;
  private running: { drain: AbortController; hard: AbortController; done: Promise<RunSummary | RefusedRun> } | undefined;
  private remote: { remote: { cancel(hard: boolean): void }; cancelled: boolean } | undefined;
  /** The journal of the run going on in this process, and the run's id (see noteWindow). */
  private journalOfRun: { journal: Journal; runId: string } | undefined;
  private readonly listeners = new Set<() => void>();
  private alsoFrom: readonly string[] = [];
  /** Where the store's reading of the journal ended; undefined: the next read is a whole one. */
  private position: JournalPosition | undefined;
  /** Prompts a version before 0.2 kept beside the journal: read (never written) until the journal has its own. */
  private legacyPrompts: PromptItem[] | undefined;
  private legacyLooked = false;
  /** An action holds the journal's lock, its read done (see load). */
  private acting = false;
  /** How long the last read of the journal took, its wait for its turn apart (a watcher paces itself by it). */
  lastReadMs = 0;
  /** The store a whole read of the journal is building; it replaces `store` once the read ends. */
  private building: TraceStore | undefined;
  /** The journal's length when its index was last read or written (see storeIndex.ts). */
  private indexedAt = 0;
  /**
   * The read or action of the journal going on: the next waits for it. Two reads at once (the window's first restore
   * and its watcher, say) would each build a store and the later would keep a half-built one, or read the same
   * records twice.
   */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    readonly key: SessionKey,
    private readonly stateDir: string,
    /** false: keep nothing on disk (measuring the journal's own cost; no resume, no history). */
    private readonly journaled = true,
    /** The journal's file operations (tests inject a full disk here). */
    private readonly fs?: JournalFs,
  ) {}

  get journalFile(): string {
    return journalPath(this.stateDir, this.key);
  }

  /** A run of this evaluation is going on: in this process, or in a runner process this window follows. */
  get isRunning(): boolean {
    return this.running !== undefined || this.remote !== undefined;
  }

  /** The run goes on in this process (its store is the live one; another's is followed through the journal). */
  get runsHere(): boolean {
    return this.running !== undefined;
  }

  /**
   * Follows a run of this evaluation in another process (a runner): it counts as running here, Cancel reaches it, and
   * its progress is what this session reports. The returned handle feeds it; end() when the run ends or is lost.
   */
  follow(remote: { cancel(hard: boolean): void }): { progress(p: RunProgress): void; end(summary: RunSummary | undefined): void } {
    const state = { remote, cancelled: false };
    this.remote = state;
    this.lastRunAt = Date.now();
    this.changed();
    return {
      progress: (p) => {
        this.lastProgress = p;
        this.changed();
      },
      end: (summary) => {
        if (this.remote === state) this.remote = undefined;
        if (summary) this.lastSummary = summary;
        this.changed();
      },
    };
  }

  get hasPrompts(): boolean {
    return this.store.traces.size > 0 || (this.store.listedTotal ?? 0) > 0;
  }

  get runs(): readonly RunInfo[] {
    return this.store.runs;
  }

  onDidChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(): void {
    for (const l of this.listeners) l();
  }

  /**
   * Reads these state folders too, as one evaluation with this one (status, export: the shards of a run spread
   * over machines). Read only: runs and submissions go to this session's own folder.
   */
  readAlso(stateDirs: readonly string[]): this {
    this.alsoFrom = stateDirs;
    return this;
  }

  /**
   * Brings the traces up to date with the journal: reads on from the last byte read (another process's run, another
   * window's verdict), or the whole journal when it is new or another file. A run in this process keeps the store
   * current itself. The first read also takes the prompts a version before 0.2 kept beside the journal.
   */
  async load(): Promise<void> {
    // While an action holds the journal's lock nobody else writes it, and the action keeps the store current: there
    // is nothing to read, and no reason to wait for it (a Fetch Prompts may wait minutes for generation).
    if (this.running || this.acting) return;
    await this.inTurn(async () => {
      if (this.running) return;
      const started = Date.now();
      await this.openIndex();
      const replay = await this.readAll();
      await this.readLegacyPrompts();
      this.absorb(replay);
      await this.keepIndex();
      this.lastReadMs = Date.now() - started;
      this.changed();
    });
  }

  /** Runs `fn` once the journal's read or action before it has ended (whether it failed or not). */
  private inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const mine = this.turn.then(fn, fn);
    this.turn = mine.catch(() => undefined);
    return mine;
  }

  /**
   * Before the first read: the store as the index beside the journal has it, and the position it was taken at, so the
   * read goes on from there. An index that no longer fits the journal (another file, cut short) makes that read a
   * whole one, which builds the store afresh; none at all, likewise.
   */
  private async openIndex(): Promise<void> {
    if (!this.journaled || this.position || this.alsoFrom.length) return;
    const index = await readIndex(this.journalFile, sessionId(this.key));
    if (!index || this.position) return;
    this.store.close();
    this.store = TraceStore.fromImage(index.image, new JournalText(this.journalFile));
    this.position = index.position;
    this.invalidLines = index.invalidLines;
    this.indexedAt = index.position.bytes;
  }

  /**
   * Writes the index again once the journal has grown past it by a quarter (at least 1 MB): a 100,000-trace journal is
   * opened by reading its index and what follows it; a store that follows a run in another process rewrites it a
   * few dozen times over the run, not at every read.
   */
  private async keepIndex(force = false): Promise<void> {
    const position = this.position;
    if (!this.journaled || !position || this.alsoFrom.length || !this.store.placed) return;
    const grown = position.bytes - this.indexedAt;
    if (grown < INDEX_MIN_GROWTH || (!force && grown < this.indexedAt / 4)) return;
    this.indexedAt = position.bytes;
    await writeIndex(this.journalFile, sessionId(this.key), { position, invalidLines: this.invalidLines, image: this.store.image() });
  }

  /** The journal, and the other folders' after it: each shard's records are about its own traces. */
  private async readAll(): Promise<JournalReadResult> {
    if (this.alsoFrom.length === 0) return readJournal(this.journalFile, this.position, this.visitor());
    const first = await readJournal(this.journalFile);
    const all = [first, ...(await Promise.all(this.alsoFrom.map((dir) => readJournal(journalPath(dir, this.key)))))];
    return { records: all.flatMap((r) => r.records), tornTail: all.some((r) => r.tornTail), corruptLines: all.reduce((n, r) => n + r.corruptLines, 0) };
  }

  /** Prompts a version before 0.2 kept beside the journal, looked for once, while the journal has none of its own. */
  private async readLegacyPrompts(): Promise<void> {
    if (this.legacyLooked || this.alsoFrom.length || (this.building ?? this.store).promptsRecorded) return;
    this.legacyLooked = true;
    const side = this.journalFile.replace(/\.jsonl$/, '.prompts.json');
    this.legacyPrompts = await readFile(side, 'utf8').then((t) => JSON.parse(t) as PromptItem[], () => undefined);
  }

  /** Lists the prompts and journals them (the tree shows them before any run). */
  async fetchPrompts(
    client: ApiClient,
    options: { signal?: AbortSignal; waitForGenerationMs?: number; onWait?: (reason: string) => void } = {},
  ): Promise<number> {
    const stream = (sink: PromptSink) => streamPromptsOf(client, this.key.kind, this.key.evaluationId, sink, { ...options, onWait: (e) => options.onWait?.(e.reason) });
    // A run in progress journals the list itself.
    if (this.isRunning) return (await stream(() => Promise.resolve())).count;
    return this.withJournal(async (journal) => {
      const list = new ListWriter(this.store, journal, () => undefined);
      await stream((batch) => list.add(batch));
      return (await list.end()).size;
    });
  }

  /**
   * Runs the evaluation (or some traces) through the core engine, one run at a time. Refused, with nothing
   * done, when the journal's answers came from another target and the mode does not say what to do with them.
   */
  async run(options: SessionRunOptions): Promise<RunSummary | RefusedRun> {
    if (this.isRunning) throw new Error('This evaluation is already running.');
    const drain = new AbortController();
    const hard = new AbortController();
    const unlink = link(options.drainSignal, drain, options.signal, hard);
    const runId = newRunId();
    const done = this.withJournal(async (journal, replay) => {
      this.journalOfRun = { journal, runId };
      options.onReplay?.(replay, this.journalFile);
      const { client, reuseFetchedPrompts, onProgress, identity, mode = 'continue', tool, onReplay: _r, drainSignal: _d, signal: _s, ...rest } = options;
      const conflict = targetConflict(this.store, identity, mode);
      if (conflict) {
        const what = `${this.key.kind} evaluation ${this.key.evaluationId}`;
        return { outcome: 'targetChanged' as const, conflict, message: describeConflict(conflict, what) };
      }
      return engineModule().runEvaluation({
        ...rest,
        client,
        kind: this.key.kind,
        evaluationId: this.key.evaluationId,
        journal,
        store: this.store,
        signal: hard.signal,
        drainSignal: drain.signal,
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
          origin: this.key.origin,
          kind: this.key.kind,
          evaluationId: this.key.evaluationId,
          ...(rest.shard ? { shard: formatShard(rest.shard) } : {}),
        },
        onProgress: (p) => {
          this.lastProgress = p;
          onProgress?.(p);
          this.changed();
        },
      });
    });
    this.running = { drain, hard, done };
    this.lastRunAt = Date.now();
    this.changed();
    try {
      const summary = await done;
      if (summary.outcome !== 'targetChanged') this.lastSummary = summary;
      return summary;
    } finally {
      unlink();
      this.journalOfRun = undefined;
      this.running = undefined;
      this.changed();
    }
  }

  /**
   * Rerun Traces: the chosen subset (failed, marked bad, noted, or given ids) goes to the target again as a
   * new run, without the "another target" question (the user chose these traces), its answers held or
   * submitted as options say. `previousRun`: the run that gave most of those traces their answers before.
   */
  async rerun(subset: RerunSubset, options: SessionRunOptions): Promise<{ result: RunSummary | RefusedRun | undefined; ids: string[]; unknown: number; previousRun: string | undefined }> {
    await this.load();
    const { ids, unknown } = selectTraces(this.store, subset);
    const before = previousRun(this.store, ids);
    if (ids.length === 0) return { result: undefined, ids, unknown, previousRun: before };
    const result = await this.run({ ...options, only: new Set(ids), rerun: true, mode: 'reuse', reuseFetchedPrompts: true });
    return { result, ids, unknown, previousRun: before };
  }

  /**
   * A window of the editor attached to the run going on in this process (a runner's), or let go of it: journaled with
   * the run, for its history. Nothing when no run is going on (before its start record, or once it ended).
   */
  async noteWindow(ev: 'attached' | 'detached'): Promise<void> {
    const live = this.journalOfRun;
    const run = this.store.currentRun;
    if (!live || run?.runId !== live.runId || run.endedAt !== undefined) return;
    // Only history: a failed write is the journal's failure, which the run itself reports.
    await commit(live.journal, this.store, { t: 'window', run: live.runId, at: Date.now(), ev }).catch(() => undefined);
  }

  /** First call: finish in-flight traces and stop; `hard`: abort them too. */
  cancel(hard = false): void {
    if (this.remote) {
      this.remote.remote.cancel(hard || this.remote.cancelled);
      this.remote.cancelled = true;
      return;
    }
    if (!this.running) return;
    if (hard || this.running.drain.signal.aborted) this.running.hard.abort();
    else this.running.drain.abort();
  }

  /** Keeps a reviewer's edit of an answer (not submitted yet). */
  async saveAnswer(traceId: string, answer: string): Promise<void> {
    await this.withJournal(async (journal) => {
      const record = { t: 'answer' as const, id: traceId, a: answer, at: Date.now(), by: 'user' as const };
      await commit(journal, this.store, record);
    });
  }

  /**
   * Submits one trace's answer (the given text, or the journaled one). `fromRun`: the text is that run's answer
   * (Compare Runs), journaled as its target's, not as the reviewer's. A new text is journaled only once the service
   * has accepted it: a refused submission (no such trace, too long) records nothing, it only throws its reason.
   */
  async submitAnswer(
    client: ApiClient,
    traceId: string,
    answer?: string,
    fromRun?: string,
  ): Promise<{ message: string; requestCode: string | undefined }> {
    return this.withJournal(async (journal) => {
      const info = this.store.get(traceId);
      const text = answer ?? info?.answer;
      if (text === undefined) throw new Error(`Trace "${traceId}" has no answer to submit yet.`);
      const result = await client.submitAnswer(this.key.kind, this.key.evaluationId, traceId, text);
      if (answer !== undefined && answer !== info?.answer) {
        const by = fromRun && this.store.runById(fromRun) ? { run: fromRun } : { by: 'user' as const };
        const record = { t: 'answer' as const, id: traceId, a: answer, at: Date.now(), ...by };
        await commit(journal, this.store, record);
      }
      await this.journalAccepted(journal, traceId, result);
      return { message: result.message || result.data, requestCode: result.requestCode };
    });
  }

  /** One journaled answer to the service, its acceptance journaled. */
  private async submitJournaled(journal: Journal, client: ApiClient, traceId: string, text: string): Promise<SubmitResult> {
    const result = await client.submitAnswer(this.key.kind, this.key.evaluationId, traceId, text);
    await this.journalAccepted(journal, traceId, result);
    return result;
  }

  private async journalAccepted(journal: Journal, traceId: string, result: SubmitResult): Promise<void> {
    const record = { t: 'submitted' as const, id: traceId, at: Date.now(), ...(result.requestCode ? { code: result.requestCode } : {}) };
    await commit(journal, this.store, record);
  }

  /** A reviewer's verdict on the trace's current answer and a note (journaled, never sent); undefined clears. */
  async setVerdict(traceId: string, rating: 'good' | 'bad' | undefined, note: string | undefined): Promise<void> {
    await this.withJournal(async (journal) => {
      if (!this.store.get(traceId)) throw new Error(`Trace "${traceId}" is not in this evaluation.`);
      const text = note?.trim().slice(0, MAX_NOTE_LENGTH);
      const record = { t: 'verdict' as const, id: traceId, at: Date.now(), ...(rating ? { rating } : {}), ...(text ? { note: text } : {}) };
      await commit(journal, this.store, record);
    });
  }

  /**
   * Gives up the evaluation's open Batch API batches (the editor's Cancel, when the user chose to abandon them rather
   * than only stop following): each cancelled at the provider and journaled as abandoned. Their ids.
   */
  async abandonBatches(batch: BatchTarget, signal: AbortSignal): Promise<string[]> {
    return this.withJournal((journal) => batchRunModule().abandonBatches(batch, journal, this.store, signal));
  }

  /** Every trace's answers in two runs, from the journal (no service call); texts are read back as they are shown. */
  async compare(runA: string, runB: string): Promise<ComparedTrace[]> {
    await this.load();
    // A store that holds its texts (nothing journaled) gets a reader of its own, kept with it.
    if (!this.store.textSource) this.store.readFrom(new JournalText(this.journalFile));
    return compareRuns(this.journalFile, this.store, this.store.textSource!, runA, runB);
  }

  /**
   * Submit as Not Answered: every skipped trace (and one whose not-answered text was not accepted yet) gets the
   * template's text with its reason, journaled as such (`na`) before it is submitted. A rejected token stops it.
   */
  async submitSkipped(client: ApiClient, template: string): Promise<{ submitted: number; failed: Array<{ traceId: string; reason: string }> }> {
    return this.withJournal(async (journal) => {
      const todo = [...this.store.traces.values()].filter((t) => t.state === 'skipped' || (t.notAnswered && (t.state === 'answered' || t.state === 'failed')));
      const failed: Array<{ traceId: string; reason: string }> = [];
      let submitted = 0;
      for (const t of todo) {
        if (t.state === 'skipped') {
          const record = { t: 'answer' as const, id: t.traceId, a: skippedAnswerText(template, t.error, t.traceId), at: Date.now(), by: 'user' as const, na: true };
          await commit(journal, this.store, record);
        }
        try {
          await this.submitJournaled(journal, client, t.traceId, t.answer!);
          submitted++;
        } catch (error) {
          if (error instanceof AuthError) throw error;
          const reason = error instanceof Error ? error.message : String(error);
          const record = { t: 'failed' as const, id: t.traceId, reason, stage: 'submit' as const, at: Date.now() };
          await commit(journal, this.store, record);
          failed.push({ traceId: t.traceId, reason });
        }
      }
      return { submitted, failed };
    });
  }

  async skip(traceId: string, reason: string): Promise<void> {
    await this.withJournal(async (journal) => {
      const record = { t: 'skipped' as const, id: traceId, reason, at: Date.now() };
      await commit(journal, this.store, record);
    });
  }

  /** Local progress and history, from the journal alone (no network, no token). */
  async status(): Promise<EvaluationStatus> {
    await this.load();
    const failed = [...this.store.inState('failed')].map((t) => ({ traceId: t.traceId, reason: t.error }));
    return {
      journal: this.journalFile,
      // Only the folders that hold a journal are named (a shard that never ran has none).
      ...(this.alsoFrom.length ? { journals: [this.journalFile, ...this.alsoFrom.map((dir) => journalPath(dir, this.key))].filter((f) => existsSync(f)), notDone: notDoneIds(this.store, 1000) } : {}),
      total: this.store.total,
      listed: this.store.promptsRecorded || this.store.listedTotal !== undefined,
      counts: this.store.snapshotCounts(),
      failed,
      notAnswered: notAnsweredCount(this.store),
      alreadyAtService: this.store.countWith('alreadyAtService', ['submitted']),
      runs: this.store.runs,
      tornTail: this.tornTail,
      invalidLines: this.invalidLines,
    };
  }

  /** What the HTML report shows (report/renderReport.ts writes the page); reads the journal first. */
  /** The report written to a file as it is made, its rows' texts read from the journal one by one; the bytes written. */
  async writeReport(path: string, page?: ReportPage, now = new Date()): Promise<number> {
    await this.load();
    const summary = reportSummary(this.store, { kind: this.key.kind, evaluationId: this.key.evaluationId, origin: this.key.origin }, now);
    return writePiecesOwnerOnly(path, reportChunks(summary, reportRows(this.store), page));
  }

  async reportData(now = new Date()): Promise<ReportData> {
    await this.load();
    return reportData(this.store, { kind: this.key.kind, evaluationId: this.key.evaluationId, origin: this.key.origin }, now);
  }

  /** Every trace to a file (owner-only) or as lines; reads the journal first. */
  async exportTo(format: ExportFormat, path: string, options: ExportOptions = {}): Promise<number> {
    await this.load();
    return exportToFile(this.store, format, path, options);
  }

  async exportLines(format: ExportFormat, options: ExportOptions = {}): Promise<Generator<string>> {
    await this.load();
    return exportLines(this.store, format, options);
  }

  /**
   * An action under the journal's lock, in its turn: a run holds the turn until it ends (reads meanwhile are its own
   * store's), and an action asked for during a run in this process is refused at once by the lock, never queued.
   */
  private withJournal<T>(fn: (journal: Journal, replay: JournalReadResult) => Promise<T>): Promise<T> {
    return this.running ? this.withJournalNow(fn) : this.inTurn(() => this.withJournalNow(fn));
  }

  private async withJournalNow<T>(fn: (journal: Journal, replay: JournalReadResult) => Promise<T>): Promise<T> {
    if (!this.journaled) {
      const replay = { records: [], tornTail: false, corruptLines: 0 };
      this.absorb(replay);
      return fn(nullJournal(), replay);
    }
    await this.openIndex();
    const { journal, replay } = await openJournal(this.journalFile, { ...(this.fs ? { fs: this.fs } : {}), ...(this.position ? { from: this.position } : {}), visit: this.visitor() });
    try {
      this.absorb(replay);
      this.acting = true;
      return await fn(journal, replay);
    } finally {
      await journal.close();
      // The lock was held: the file is what it was plus what this journal wrote (unless a write failed).
      this.position = this.position && journal.failure === undefined ? positionAfter(this.position, journal) : undefined;
      this.acting = false;
      // What a run wrote is indexed when it ends (a run writes a journal's worth; a verdict waits for more).
      await this.keepIndex(journal.bytesWritten >= INDEX_MIN_GROWTH);
      this.changed();
    }
  }

  /**
   * Where a read of the journal puts its records: the store, for a read that goes on from the last; a new store that
   * reads its texts back from the journal, for a whole read (absorb puts it in place once the read ends).
   */
  private visitor(): JournalVisitor {
    return (continued) => {
      if (continued) return (record, at) => this.store.apply(record, at);
      const store = new TraceStore().readFrom(new JournalText(this.journalFile));
      this.building?.close();
      this.building = store;
      return (record, at) => store.apply(record, at);
    };
  }

  /** A read of the journal into the store: what was appended since the last read, or the whole of it. */
  private absorb(replay: JournalReadResult): void {
    this.tornTail = replay.tornTail;
    this.position = replay.position;
    const built = this.building;
    this.building = undefined;
    if (replay.continued) {
      this.invalidLines += replay.corruptLines;
      for (const record of replay.records) this.store.apply(record);
      return;
    }
    this.invalidLines = replay.corruptLines;
    // Read whole: an index there was is not of this store.
    this.indexedAt = 0;
    // Records read without places (the shards' other folders) make a store that holds its texts.
    const store = built && replay.records.length === 0 ? built : TraceStore.fromRecords(replay.records);
    if (!store.promptsRecorded && this.legacyPrompts) store.setListed(this.legacyPrompts);
    if (store !== this.store) this.store.close();
    this.store = store;
  }
}

/**
 * Where a position moves to once a journal appended under the lock (undefined: read whole next time, as for a file
 * too short for its first bytes to be known yet).
 */
function positionAfter(position: JournalPosition, journal: Journal): JournalPosition | undefined {
  if (journal.bytesWritten === 0) return position;
  if (position.bytes < CHECKED) return undefined;
  const before = Buffer.concat([Buffer.from(position.before, 'base64'), journal.lastWritten]).subarray(-CHECKED);
  return { ...position, bytes: position.bytes + journal.bytesWritten, before: before.toString('base64') };
}

/** The first `max` traces no run has done anything with yet (pending), in list order. */
function notDoneIds(store: TraceStore, max: number): string[] {
  const ids: string[] = [];
  for (const t of store.traces.values()) {
    if (t.state !== 'pending') continue;
    ids.push(t.traceId);
    if (ids.length >= max) break;
  }
  return ids;
}

export function sessionId(key: SessionKey): string {
  return `${key.origin}|${key.kind}|${key.evaluationId}`;
}

/** A run id people can read and sort: its start time, and a few random letters. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

function link(drainFrom: AbortSignal | undefined, drain: AbortController, hardFrom: AbortSignal | undefined, hard: AbortController): () => void {
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
