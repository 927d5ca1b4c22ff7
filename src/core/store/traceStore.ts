import type { PromptItem } from '../../api/schemas';
import type { JournalRecord } from '../journal/journalRecords';
import type { BatchPlaces, RecordLocation } from '../journal/journal';
import type { TextSource } from '../journal/journalText';
import { RunHistory } from './runHistory';
import type { RunInfo } from './runHistory';
import type { RunAnswers, RunAnswersImage } from './runAnswers';
import { FLAG, LOCAL_STATES, RATING, STATE_CODES, TraceRows } from './traceRows';
import type { LocalTraceState, TraceColumns, TraceInfo } from './traceRows';
import { TraceMap } from './traceMap';
import { RunVerdicts } from './runVerdicts';
import type { RunVerdict, RunVerdictImage } from './runVerdicts';
import { applyBatch } from './storeBatches';
import type { BatchInfo } from './storeBatches';

export { LOCAL_STATES, NUMBER_COLUMNS, newColumns } from './traceRows';
export type { LocalTraceState, TraceColumns, TraceInfo } from './traceRows';
export type { RunInfo, WindowEvents } from './runHistory';
export type { RunVerdict } from './runVerdicts';
export type { BatchInfo } from './storeBatches';

export const STATE_LABELS: Readonly<Record<LocalTraceState, string>> = {
  pending: 'Awaiting Trigger',
  running: 'Sent to target',
  answered: 'Responded',
  submitted: 'Submitted',
  failed: 'Failed',
  skipped: 'Skipped',
};

export type StateCounts = Record<LocalTraceState, number>;


/** What the store is, as of some place in its journal: written beside the journal so opening reads only what follows. */
export interface StoreImage {
  listedTotal: number | null;
  promptsRecorded: boolean;
  runs: RunInfo[];
  traces: TraceColumns;
  /** The Batch API batches the journal tells of (open ones are taken up by the next run). */
  batches: BatchInfo[];
  /** Every verdict by the run whose answer it judged (see runVerdicts.ts). */
  verdicts: RunVerdictImage;
  /** Each run's answers: places and digests (see runAnswers.ts). */
  answers: RunAnswersImage[];
}

const ratingFlag = (rating: string | undefined) => (rating === 'good' ? FLAG.good : rating === 'bad' ? FLAG.bad : 0);

export function emptyCounts(): StateCounts {
  return { pending: 0, running: 0, answered: 0, submitted: 0, failed: 0, skipped: 0 };
}

/**
 * The state of every trace of one evaluation, rebuilt from the journal and kept current by the engine.
 * Counts are maintained incrementally so progress at 100,000 traces costs nothing per event.
 */
export class TraceStore {
  private readonly watchers = new Set<(trace: TraceInfo | undefined) => void>();
  private readonly rows: TraceRows;
  /** Every trace, by id (a Map's reading side over the rows; a trace is the same object each time). */
  readonly traces: TraceMap;
  /** Traces in the service's last list, when known. */
  listedTotal: number | undefined;
  /** The journal holds the service's prompt list (a prompts record), not only the prompts of answered traces. */
  promptsRecorded = false;
  /** Every run and what it did (see runHistory.ts). */
  private readonly history: RunHistory;
  private readonly tally = emptyCounts();
  /** Batch API batches by input file id, oldest first (see the journal's batch record). */
  readonly batches = new Map<string, BatchInfo>();
  private readonly verdicts: RunVerdicts;

  constructor(columns?: TraceColumns, runs?: readonly RunInfo[], verdicts?: RunVerdictImage, answers?: readonly RunAnswersImage[]) {
    this.history = new RunHistory(runs, answers);
    this.verdicts = new RunVerdicts(verdicts);
    this.rows = new TraceRows(columns);
    this.traces = new TraceMap(this.rows);
    for (let i = 0; i < this.rows.n; i++) this.tally[LOCAL_STATES[this.rows.c.state[i]!]!]++;
  }

  /** Reads texts back from this journal: records applied with their places keep the places, not the texts. */
  readFrom(source: TextSource): this {
    this.rows.source = source;
    return this;
  }

  get placed(): boolean {
    return this.rows.source !== undefined;
  }

  /** Where this store reads texts back from (undefined: it holds them). */
  get textSource(): TextSource | undefined {
    return this.rows.source;
  }

  /** Stops reading texts back (the journal is closed with the session, or the store replaced). */
  close(): void {
    this.rows.source?.close();
  }

  /** The store as an image for its index (see storeIndex.ts). */
  image(): StoreImage {
    return { listedTotal: this.listedTotal ?? null, promptsRecorded: this.promptsRecorded, runs: this.runs, traces: this.rows.image(), batches: [...this.batches.values()], verdicts: this.verdicts.image(), answers: this.history.answersImage() };
  }

  /** A store back from its image, reading its texts from `source`. */
  static fromImage(image: StoreImage, source: TextSource): TraceStore {
    const store = new TraceStore(image.traces, image.runs, image.verdicts, image.answers).readFrom(source);
    store.listedTotal = image.listedTotal ?? undefined;
    store.promptsRecorded = image.promptsRecorded;
    for (const batch of image.batches) store.batches.set(batch.file, batch);
    return store;
  }

  static fromRecords(records: Iterable<JournalRecord>): TraceStore {
    const store = new TraceStore();
    for (const record of records) store.apply(record);
    return store;
  }

  get counts(): Readonly<StateCounts> {
    return this.tally;
  }

  /** Traces known in all: listed ones, or the journal's when the list was never seen. */
  get total(): number {
    return Math.max(this.listedTotal ?? 0, this.rows.n);
  }

  get(traceId: string): TraceInfo | undefined {
    return this.traces.get(traceId);
  }

  /** Registers the service's list: new traces become pending; returns the trace ids listed twice. */
  setListed(prompts: readonly PromptItem[]): string[] {
    const seen = new Set<string>();
    const duplicates: string[] = [];
    for (const { traceId, content } of prompts) {
      if (seen.has(traceId)) {
        duplicates.push(traceId);
        continue;
      }
      seen.add(traceId);
      this.rows.setText(this.ensure(traceId), 'p', content, undefined);
    }
    this.listedTotal = seen.size;
    return duplicates;
  }

  /** Every run, oldest first. */
  get runs(): RunInfo[] {
    return this.history.runs;
  }

  /** The latest run: the target the journal's answers are held under now. */
  get currentRun(): RunInfo | undefined {
    return this.history.current;
  }

  runById(runId: string | undefined): RunInfo | undefined {
    return this.history.byId(runId);
  }

  /** A run's verdict on its answer to a trace (Compare Runs, an older run's export); the trace's own is `rating`. */
  verdictOf(runId: string | undefined, traceId: string): RunVerdict | undefined {
    return this.verdicts.get(runId, traceId);
  }

  /** A run's answers, places and digests (Compare Runs); undefined when it answered nothing. */
  runAnswers(runId: string): RunAnswers | undefined {
    return this.history.answersOf(runId);
  }

  /**
   * Tells `watcher` about every trace a record changes from now on (undefined: any trace may have changed: a new
   * list, a fresh run). For views that keep rows in step without scanning 100,000 traces. Returns the way to stop.
   */
  onTraceChanged(watcher: (trace: TraceInfo | undefined) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /**
   * One journal record replayed (or just written): the last record about a trace decides its state. `at`: where the
   * record is on disk (a replay): its texts are kept as that place. A record just written is applied with its texts,
   * then settled once it is on disk.
   */
  apply(record: JournalRecord, at?: RecordLocation): void {
    this.applyRecord(record, at);
    if (this.watchers.size === 0) return;
    let changed: TraceInfo | undefined | null = null;
    // A list's items are told once, by the list's record after them.
    if (record.t === 'item') return;
    if ('id' in record) changed = this.traces.get(record.id) ?? null;
    else if (record.t === 'prompts' || record.t === 'list' || (record.t === 'run' && record.mode === 'fresh')) changed = undefined;
    if (changed !== null) this.tell(changed);
  }

  /**
   * A batch of records on disk at `places` (commitAll; none: a journal that keeps nothing), applied as a replay
   * would. A list's item, most of them, only sets its trace's prompt to its place, and tells no watcher (the list's
   * record after them does): set here without apply's dispatch and an object per place.
   */
  applyPlaced(records: readonly JournalRecord[], places: BatchPlaces | undefined): void {
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      if (!places) this.apply(record);
      else if (record.t === 'item' && this.rows.source) this.rows.setPlace(this.ensure(record.id), 'p', places.offsets[i]!, places.lengths[i]!);
      else this.apply(record, { offset: places.offsets[i]!, length: places.lengths[i]! });
    }
  }

  private tell(changed: TraceInfo | undefined): void {
    for (const watcher of this.watchers) watcher(changed);
  }

  /** A record written with its texts is on disk at `at`: the store keeps the place instead of the texts. */
  settle(record: JournalRecord, at: RecordLocation | undefined): void {
    if (!at || !this.rows.source || !('id' in record)) return;
    const i = this.rows.row(record.id);
    if (i === undefined) return;
    // A run's submission is handed its answer (submissions.ts): nothing reads it back soon, so it is not kept.
    if ('a' in record && record.a !== undefined && this.rows.held(i, 'a') === record.a) this.rows.setText(i, 'a', record.a, at);
    if (record.t === 'answer') this.history.settled(record, i, at);
    if ('p' in record && record.p !== undefined && this.rows.held(i, 'p') === record.p) this.rows.setText(i, 'p', record.p, at);
  }

  private applyRecord(record: JournalRecord, at: RecordLocation | undefined): void {
    switch (record.t) {
      case 'run':
        this.history.started(record);
        // A fresh run answers everything again: what came before is set aside (skips are a person's call and stay).
        if (record.mode === 'fresh') this.setAsideAnswers();
        return;
      case 'end':
        return this.history.ended(record);
      case 'window':
        return this.history.window(record);
      case 'steer':
        return this.history.steered(record);
      case 'prompts':
        this.setListed(record.items);
        this.promptsRecorded = true;
        return;
      case 'item':
        this.rows.setText(this.ensure(record.id), 'p', record.p, at);
        return;
      case 'list':
        this.listedTotal = record.total;
        if (record.full) this.promptsRecorded = true;
        this.rows.fit();
        return;
      case 'answer':
        return this.applyAnswer(record, at);
      case 'verdict':
        return this.applyVerdict(record);
      case 'submitted':
        return this.applySubmitted(record);
      case 'failed':
        return this.applyFailed(record, at);
      case 'skipped': {
        const i = this.ensure(record.id);
        this.rows.setKept('error', i, record.reason);
        this.move(i, 'skipped');
        return;
      }
      case 'batch':
        return applyBatch(this.batches, record);
    }
  }

  /**
   * A verdict is kept with the run whose answer it judged. One written before verdicts named a run judged the answer
   * the trace held then: that answer's run (the latest run when the trace had none). The trace's own verdict (its
   * current answer's) changes only when the verdict is about that answer.
   */
  private applyVerdict(record: Extract<JournalRecord, { t: 'verdict' }>): void {
    const i = this.rows.row(record.id);
    if (i === undefined) return;
    const answered = this.rows.runOf(i);
    const run = record.run ?? answered ?? this.currentRun?.runId;
    this.verdicts.set(run, record.id, { rating: record.rating, note: record.note });
    if (record.run !== undefined && run !== answered) return;
    this.rows.setFlags(i, RATING, ratingFlag(record.rating));
    this.rows.setKept('note', i, record.note || undefined);
  }

  private applyAnswer(record: Extract<JournalRecord, { t: 'answer' }>, at: RecordLocation | undefined): void {
    const rows = this.rows;
    const i = this.ensure(record.id);
    if (rows.c.p[i] === -1 && record.p !== undefined) rows.setText(i, 'p', record.p, at);
    // A verdict is about one run's answer: another run's answer has that run's verdict (none until one is given or
    // carried over); the same run's changed answer loses it (the old text is read only when there is a verdict).
    const run = record.run ?? this.currentRun?.runId;
    let kept = rows.c.flags[i]! & RATING;
    if (run !== rows.runOf(i)) {
      const verdict = this.verdicts.get(run, record.id);
      kept = ratingFlag(verdict?.rating);
      if (verdict?.note !== undefined || rows.c.note[i] !== undefined) rows.setKept('note', i, verdict?.note);
    } else if ((kept !== 0 || rows.c.note[i] !== undefined) && rows.text(i, 'a') !== record.a) {
      kept = 0;
      rows.setKept('note', i, undefined);
      this.verdicts.set(run, record.id, undefined);
    }
    rows.setText(i, 'a', record.a, at);
    rows.setNumber('tp', i, record.tp);
    rows.setNumber('tc', i, record.tc);
    rows.c.flags[i] = kept | (record.err ? FLAG.errorAnswer : 0) | (record.na ? FLAG.notAnswered : 0) | (record.by === 'user' ? FLAG.byUser : FLAG.byTarget);
    rows.setNumber('ms', i, record.ms);
    rows.setNumber('ft', i, record.ft);
    rows.setNumber('answeredAt', i, record.at);
    rows.setKept('error', i, undefined);
    rows.setRun(i, run);
    this.history.answered(record, i, at, rows.n);
    this.move(i, 'answered');
  }

  private applySubmitted(record: Extract<JournalRecord, { t: 'submitted' }>): void {
    const i = this.ensure(record.id);
    this.rows.setNumber('submittedAt', i, record.at);
    this.rows.setFlags(i, FLAG.alreadyAtService | FLAG.failedAtTarget | FLAG.failedAtSubmit, record.dup === true ? FLAG.alreadyAtService : 0);
    this.rows.setKept('error', i, undefined);
    this.history.submitted();
    this.move(i, 'submitted');
  }

  private applyFailed(record: Extract<JournalRecord, { t: 'failed' }>, at: RecordLocation | undefined): void {
    const i = this.ensure(record.id);
    if (this.rows.c.p[i] === -1 && record.p !== undefined) this.rows.setText(i, 'p', record.p, at);
    this.rows.setKept('error', i, record.reason);
    this.rows.setFlags(i, FLAG.failedAtTarget | FLAG.failedAtSubmit, record.stage === 'target' ? FLAG.failedAtTarget : record.stage === 'submit' ? FLAG.failedAtSubmit : 0);
    this.history.failed(record);
    this.move(i, 'failed');
  }

  private setAsideAnswers(): void {
    const rows = this.rows;
    for (let i = 0; i < rows.n; i++) {
      if (rows.c.state[i] === STATE_CODES.skipped) continue;
      rows.setText(i, 'a', undefined, undefined);
      rows.c.flags[i] = 0;
      rows.setKept('error', i, undefined);
      rows.setKept('note', i, undefined);
      for (const name of ['ms', 'ft', 'answeredAt', 'submittedAt', 'tp', 'tc'] as const) rows.setNumber(name, i, undefined);
      rows.setRun(i, undefined);
      this.move(i, 'pending');
    }
  }

  /** Moves a trace to a state that the journal does not record (running, or back to pending). */
  setTransient(traceId: string, state: 'running' | 'pending'): void {
    const i = this.rows.row(traceId);
    if (i === undefined) return;
    this.move(i, state);
    if (this.watchers.size) this.tell(this.rows.view(i));
  }

  private ensure(traceId: string): number {
    const before = this.rows.n;
    const i = this.rows.add(traceId);
    if (this.rows.n > before) this.tally.pending++;
    return i;
  }

  private move(i: number, state: LocalTraceState): void {
    this.tally[LOCAL_STATES[this.rows.c.state[i]!]!]--;
    this.rows.c.state[i] = STATE_CODES[state];
    this.tally[state]++;
  }

  /** The traces in one state, in the list's order (only those are made into objects: status at 100,000 traces). */
  *inState(state: LocalTraceState, from = 0, count = Infinity): IterableIterator<TraceInfo> {
    // None in that state (a run's failed traces at its end, mostly): no walk over every row.
    if (this.tally[state] === 0) return;
    const code = STATE_CODES[state];
    // The traces before `from` are counted in the column, never made: a page of the tree makes only its own.
    let seen = 0;
    let given = 0;
    for (let i = 0; i < this.rows.n && given < count; i++) {
      if (this.rows.c.state[i] !== code || seen++ < from) continue;
      given++;
      yield this.rows.view(i);
    }
  }

  /** How many traces in one of `states` have `flag` (read from the columns, no object made). */
  countWith(flag: 'notAnswered' | 'alreadyAtService', states: readonly LocalTraceState[]): number {
    return this.rows.countWith(FLAG[flag], states.map((s) => STATE_CODES[s]));
  }

  /** Counts with the traces listed but never seen counted as pending. */
  snapshotCounts(): StateCounts {
    const counts = { ...this.tally };
    counts.pending += Math.max(0, (this.listedTotal ?? 0) - this.rows.n);
    return counts;
  }
}
