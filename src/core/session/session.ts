import { reportData, reportRows, reportSummary } from '../report/reportData';
import { reportChunks } from '../report/renderReport';
import type { ReportPage } from '../report/renderReport';
import type { ReportData } from '../report/reportTypes';
import type { ApiClient } from '../../api/client';
import { batchRunModule } from '../run/batchLoader';
import type { BatchTarget } from '../targets/openai/openaiBatch';
import type { RunSummary } from '../run/engine';
import { commit } from '../store/commit';
import { ListWriter } from '../store/listWriter';
import { compareRuns } from '../report/compareRuns';
import type { ComparedTrace } from '../report/compareRuns';
import { exportLines, exportToFile, writePiecesOwnerOnly } from '../report/exportResults';
import { storeAsOfRun } from '../report/runExport';
import { streamPromptsOf } from '../run/promptList';
import type { PromptSink } from '../../api/client';
import type { ExportFormat, ExportOptions } from '../report/exportResults';
import { journalPath, nullJournal } from '../journal/journal';
import type { Journal, JournalKey, JournalReadResult } from '../journal/journal';
import type { Verdict } from '../journal/journalRecords';
import { JournalText } from '../journal/journalText';
import type { JournalFs } from '../journal/storage';
import { previousRun, selectTraces } from '../run/rerun';
import type { RerunSubset } from '../run/rerun';
import type { RunProgress } from '../run/runState';
import type { RunInfo } from '../store/runHistory';
import type { TraceStore } from '../store/traceStore';
import type { FollowedRemote, FollowedView, ViewRows } from './followedView';
import * as review from './reviewerWrites';
import { link, newRunId, runOrRefuse } from './sessionRun';
import type { RefusedRun, RunningHere, SessionRunOptions } from './sessionRun';
import { evaluationStatus } from './sessionStatus';
import type { EvaluationStatus } from './sessionStatus';
import { INDEX_MIN_GROWTH, StoreSync } from './storeSync';
import type { LockedJournal } from './storeSync';

export { MAX_NOTE_LENGTH } from './reviewerWrites';
export type { RefusedRun, SessionRunOptions } from './sessionRun';
export type { EvaluationStatus } from './sessionStatus';
export { sessionId } from './storeSync';

export type SessionKey = JournalKey;

/**
 * One evaluation, the one way into the core for the CLI, the extension and the tests: opened from (state
 * dir, service origin, kind, evaluation id), it runs, submits, skips, keeps a reviewer's answer, reports
 * status and runs, and exports. The journal is opened (and locked) only for the length of an operation, so
 * a CLI run and several editor windows can all show the same evaluation and never write it at once.
 *
 * The jobs are in files of their own: keeping the store in step with the journal (storeSync.ts), a run in this
 * process (sessionRun.ts), the reviewer's writes (reviewerWrites.ts) and status (sessionStatus.ts). This class holds
 * the journal's turns and lock, and who is running.
 */
export class EvaluationSession {
  lastProgress: RunProgress | undefined;
  lastSummary: RunSummary | undefined;
  lastRunAt: number | undefined;
  /** How long the last read of the journal took, its wait for its turn apart (a watcher paces itself by it). */
  lastReadMs = 0;
  private readonly sync: StoreSync;
  private running: RunningHere | undefined;
  private remote: { remote: FollowedRemote; cancelled: boolean } | undefined;
  /** The journal of the run going on in this process, and the run's id (see noteWindow). */
  private journalOfRun: { journal: Journal; runId: string } | undefined;
  private readonly listeners = new Set<() => void>();
  /** An action holds the journal's lock, its read done (see load). */
  private acting = false;
  /**
   * The read or action of the journal going on: the next waits for it. Two reads at once (the window's first restore
   * and its watcher, say) would each build a store and the later would keep a half-built one, or read the same
   * records twice.
   */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    readonly key: SessionKey,
    stateDir: string,
    /** false: keep nothing on disk (measuring the journal's own cost; no resume, no history). */
    private readonly journaled = true,
    /** The journal's file operations (tests inject a full disk here). */
    private readonly fs?: JournalFs,
  ) {
    this.sync = new StoreSync(key, journalPath(stateDir, key), journaled);
  }

  /** Every trace as the journal (and this process's run) left it; replaced when the journal is read whole. */
  get store(): TraceStore {
    return this.sync.store;
  }

  /** Journal lines skipped at the last read: unreadable or not of a known shape (never acted on). */
  get invalidLines(): number {
    return this.sync.invalidLines;
  }

  get journalFile(): string {
    return this.sync.journalFile;
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
  follow(remote: FollowedRemote): { progress(p: RunProgress): void; end(summary: RunSummary | undefined): void } {
    const state = { remote, cancelled: false };
    this.remote = state;
    // The last run's counts are not this one's (Run Details shows the progress while a run goes on).
    this.lastProgress = undefined;
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

  /** Run Details' view of the run followed in another process, as it tells it (undefined: none, or it cannot say). */
  async followedView(ids: string[], rows?: ViewRows): Promise<FollowedView | undefined> {
    return (await this.remote?.remote.view?.(ids, rows)) ?? undefined;
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
    this.sync.alsoFrom = stateDirs;
    return this;
  }

  /**
   * Brings the traces up to date with the journal: reads on from the last byte read (another process's run, another
   * window's verdict), or the whole journal when it is new or another file. A run in this process keeps the store
   * current itself. The first read also takes the prompts a version before 0.2 kept beside the journal. While a run
   * in another process is followed, the index is left to that run's end, which writes it.
   */
  async load(): Promise<void> {
    return this.read(this.remote ? 'running' : undefined);
  }

  /**
   * The run this session followed in another process ended (or was lost): one read, so the store is exact, opened from
   * the index the run's end left when that is ahead of the store (far cheaper than reading the run's records).
   */
  async loadAfterRun(): Promise<void> {
    return this.read('ended');
  }

  private async read(writer: 'running' | 'ended' | undefined): Promise<void> {
    // While an action holds the journal's lock nobody else writes it, and the action keeps the store current: there
    // is nothing to read, and no reason to wait for it (a Fetch Prompts may wait minutes for generation).
    if (this.running || this.acting) return;
    await this.inTurn(async () => {
      if (this.running) return;
      const started = Date.now();
      await this.sync.read(writer);
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
      return runOrRefuse({ key: this.key, journal, store: this.store, runId }, options, { drain, hard }, (p) => {
        this.lastProgress = p;
        options.onProgress?.(p);
        this.changed();
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
    await this.withReviewer((w) => review.saveAnswer(w, traceId, answer));
  }

  /** Submits one trace's answer (the given text, or the journaled one); see reviewerWrites.submitAnswer. */
  async submitAnswer(client: ApiClient, traceId: string, answer?: string, fromRun?: string): Promise<{ message: string; requestCode: string | undefined }> {
    return this.withReviewer((w) => review.submitAnswer(w, client, traceId, answer, fromRun));
  }

  /** A reviewer's verdict on the trace's current answer and a note (journaled, never sent); undefined clears. */
  async setVerdict(traceId: string, rating: Verdict | undefined, note: string | undefined): Promise<void> {
    await this.withReviewer((w) => review.setVerdict(w, traceId, rating, note));
  }

  /** One run's verdict on a trace carried over to another run's same answer (see reviewerWrites.carryVerdict). */
  async carryVerdict(traceId: string, from: { run: string; answer: string | undefined }, to: { run: string; answer: string | undefined }): Promise<void> {
    await this.withReviewer((w) => review.carryVerdict(w, traceId, from, to));
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
    return compareRuns(this.store, this.store.textSource!, runA, runB);
  }

  /** Submit as Not Answered: every skipped trace, with the template's text (see reviewerWrites.submitSkipped). */
  async submitSkipped(client: ApiClient, template: string): Promise<{ submitted: number; failed: Array<{ traceId: string; reason: string }> }> {
    return this.withReviewer((w) => review.submitSkipped(w, client, template));
  }

  async skip(traceId: string, reason: string): Promise<void> {
    await this.withReviewer((w) => review.skip(w, traceId, reason));
  }

  /** Local progress and history, from the journal alone (no network, no token). */
  async status(): Promise<EvaluationStatus> {
    await this.load();
    return evaluationStatus(this.sync);
  }

  /** The report written to a file as it is made, its rows' texts read from the journal one by one; the bytes written. */
  async writeReport(path: string, page?: ReportPage, now = new Date()): Promise<number> {
    await this.load();
    const summary = reportSummary(this.store, { kind: this.key.kind, evaluationId: this.key.evaluationId, origin: this.key.origin }, now);
    return writePiecesOwnerOnly(path, reportChunks(summary, reportRows(this.store), page));
  }

  /** What the HTML report shows (report/renderReport.ts writes the page); reads the journal first. */
  async reportData(now = new Date()): Promise<ReportData> {
    await this.load();
    return reportData(this.store, { kind: this.key.kind, evaluationId: this.key.evaluationId, origin: this.key.origin }, now);
  }

  /** Every trace to a file (owner-only) or as lines; reads the journal first. */
  async exportTo(format: ExportFormat, path: string, options: ExportOptions = {}): Promise<number> {
    await this.load();
    return exportToFile(await storeAsOfRun(this.journalFile, this.store, options.run), format, path, options, this.store);
  }

  async exportLines(format: ExportFormat, options: ExportOptions = {}): Promise<Generator<string>> {
    await this.load();
    return exportLines(await storeAsOfRun(this.journalFile, this.store, options.run), format, options, this.store);
  }

  /**
   * An action under the journal's lock, in its turn: a run holds the turn until it ends (reads meanwhile are its own
   * store's), and an action asked for during a run in this process is refused at once by the lock, never queued.
   */
  private withJournal<T>(fn: (journal: Journal, replay: JournalReadResult) => Promise<T>): Promise<T> {
    return this.running ? this.withJournalNow(fn) : this.inTurn(() => this.withJournalNow(fn));
  }

  private async withJournalNow<T>(fn: (journal: Journal, replay: JournalReadResult) => Promise<T>): Promise<T> {
    const sync = this.sync;
    if (!this.journaled) {
      const replay = { records: [], tornTail: false, corruptLines: 0 };
      sync.absorb(replay);
      return fn(nullJournal(), replay);
    }
    const { journal, replay } = await sync.open(this.fs);
    try {
      sync.absorb(replay);
      this.acting = true;
      return await fn(journal, replay);
    } finally {
      await journal.close();
      // The lock was held: the file is what it was plus what this journal wrote (unless a write failed).
      await sync.wrote(journal);
      this.acting = false;
      // A run's end indexes whatever it wrote, however it ended; a verdict's write waits for more.
      await sync.keepIndex(journal.bytesWritten >= INDEX_MIN_GROWTH || this.journalOfRun?.journal === journal);
      this.changed();
    }
  }

  /** A reviewer's write under the journal's lock (see reviewerWrites.ts). */
  private withReviewer<T>(fn: (w: LockedJournal) => Promise<T>): Promise<T> {
    return this.withJournal((journal) => fn({ journal, store: this.store, key: this.key }));
  }
}
