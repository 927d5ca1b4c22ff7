import type { PromptItem } from '../api/schemas';
import type { JournalRecord } from './journalRecords';
import type { RecordLocation } from './journal';
import type { TextSource } from './journalText';
import { errorGroup } from './errorGroups';
import { legacyFingerprint } from './targets/targetSpec';

/** Local trace states; the labels match the service's words where they mean the same thing. */
export const LOCAL_STATES = ['pending', 'running', 'answered', 'submitted', 'failed', 'skipped'] as const;
export type LocalTraceState = (typeof LOCAL_STATES)[number];

export const STATE_LABELS: Readonly<Record<LocalTraceState, string>> = {
  pending: 'Awaiting Trigger',
  running: 'Sent to target',
  answered: 'Responded',
  submitted: 'Submitted',
  failed: 'Failed',
  skipped: 'Skipped',
};

export type StateCounts = Record<LocalTraceState, number>;

export interface TraceInfo {
  readonly traceId: string;
  /** The prompt's text, read from the journal when asked for (a small cache keeps the last ones read). */
  readonly prompt: string | undefined;
  state: LocalTraceState;
  /** The answer's text, read like the prompt's. */
  readonly answer: string | undefined;
  /** Whether there is a prompt or an answer, without reading it. */
  readonly hasPrompt: boolean;
  readonly hasAnswer: boolean;
  /** The answer is the target's refusal or error text (onTargetError: submit). */
  errorAnswer: boolean;
  /** The answer is the not-answered text of a skipped trace (Submit as Not Answered). */
  notAnswered: boolean;
  answeredBy: 'target' | 'user' | undefined;
  /** Why the trace failed or was skipped. */
  error: string | undefined;
  failedStage: 'target' | 'submit' | undefined;
  latencyMs: number | undefined;
  /** Time to first token, when the answer was streamed. */
  ttftMs: number | undefined;
  answeredAt: number | undefined;
  submittedAt: number | undefined;
  /** The service answered 409: it already held an answer for the trace (a reply lost, another run's), counted apart. */
  alreadyAtService: boolean;
  /** The run whose target (or reviewer) gave the answer. */
  answerRun: string | undefined;
  /** Tokens the answer cost, where the target reported them. */
  promptTokens: number | undefined;
  completionTokens: number | undefined;
  /** A reviewer's verdict on the current answer and note (local only); cleared when the answer changes. */
  rating: 'good' | 'bad' | undefined;
  note: string | undefined;
}

/**
 * A trace as the store keeps it: its state and figures, and where its prompt and answer are in the journal, not the
 * texts (100,000 traces of 2 KB prompts and answers would be 400 MB of text). A text is held only until its record is
 * on disk, or when the journal keeps nothing.
 */
class Trace implements TraceInfo {
  state: LocalTraceState = 'pending';
  errorAnswer = false;
  notAnswered = false;
  answeredBy: 'target' | 'user' | undefined = undefined;
  error: string | undefined = undefined;
  failedStage: 'target' | 'submit' | undefined = undefined;
  latencyMs: number | undefined = undefined;
  ttftMs: number | undefined = undefined;
  answeredAt: number | undefined = undefined;
  submittedAt: number | undefined = undefined;
  alreadyAtService = false;
  answerRun: string | undefined = undefined;
  promptTokens: number | undefined = undefined;
  completionTokens: number | undefined = undefined;
  rating: 'good' | 'bad' | undefined = undefined;
  note: string | undefined = undefined;
  // A text held, or where it is: offset -1 is "nowhere".
  private p: string | undefined = undefined;
  private pAt = -1;
  private pLength = 0;
  private a: string | undefined = undefined;
  private aAt = -1;
  private aLength = 0;

  constructor(
    readonly traceId: string,
    private readonly store: TraceStore,
  ) {}

  get prompt(): string | undefined {
    return this.p ?? (this.pAt >= 0 ? this.store.text(this.pAt, this.pLength, 'p') : undefined);
  }

  get answer(): string | undefined {
    return this.a ?? (this.aAt >= 0 ? this.store.text(this.aAt, this.aLength, 'a') : undefined);
  }

  get hasPrompt(): boolean {
    return this.p !== undefined || this.pAt >= 0;
  }

  get hasAnswer(): boolean {
    return this.a !== undefined || this.aAt >= 0;
  }

  /** The prompt: its place in the journal when it is there (and a store reads from it), else the text itself. */
  setPrompt(text: string, at: RecordLocation | undefined): void {
    if (at && this.store.placed) {
      this.p = undefined;
      this.pAt = at.offset;
      this.pLength = at.length;
    } else {
      this.p = text;
      this.pAt = -1;
    }
  }

  setAnswer(text: string | undefined, at: RecordLocation | undefined): void {
    if (text !== undefined && at && this.store.placed) {
      this.a = undefined;
      this.aAt = at.offset;
      this.aLength = at.length;
    } else {
      this.a = text;
      this.aAt = -1;
    }
  }

  /** A record written with these texts is on disk now: the texts it holds are dropped for its place. */
  settle(record: JournalRecord, at: RecordLocation, source: TextSource): void {
    if ('a' in record && this.a === record.a) {
      this.setAnswer(record.a, at);
      source.remember(at.offset, 'a', record.a);
    }
    if ('p' in record && record.p !== undefined && this.p === record.p) this.setPrompt(record.p, at);
  }

  /** The trace into row `i` of the index's columns (see TraceColumns): its texts as places, or held texts. */
  writeTo(c: TraceColumns, i: number, runName: (run: string) => number): void {
    c.id[i] = this.traceId;
    // A trace in flight when the index is written is waiting again for whoever opens it next.
    c.state[i] = STATE_CODES[this.state === 'running' ? 'pending' : this.state];
    c.p[i] = this.p ?? this.pAt;
    c.pl[i] = this.pLength;
    c.a[i] = this.a ?? this.aAt;
    c.al[i] = this.aLength;
    c.flags[i] =
      (this.errorAnswer ? 1 : 0) |
      (this.notAnswered ? 2 : 0) |
      (this.alreadyAtService ? 4 : 0) |
      (this.answeredBy === 'user' ? 8 : this.answeredBy === 'target' ? 16 : 0) |
      (this.failedStage === 'target' ? 32 : this.failedStage === 'submit' ? 64 : 0) |
      (this.rating === 'good' ? 128 : this.rating === 'bad' ? 256 : 0);
    c.run[i] = this.answerRun === undefined ? -1 : runName(this.answerRun);
    c.ms[i] = this.latencyMs ?? null;
    c.ft[i] = this.ttftMs ?? null;
    c.answeredAt[i] = this.answeredAt ?? null;
    c.submittedAt[i] = this.submittedAt ?? null;
    c.tp[i] = this.promptTokens ?? null;
    c.tc[i] = this.completionTokens ?? null;
    c.error[i] = this.error ?? null;
    c.note[i] = this.note ?? null;
  }

  /** Back from row `i` of the index's columns. */
  readFrom(c: TraceColumns, i: number): void {
    this.state = LOCAL_STATES[c.state[i]!]!;
    const p = c.p[i]!;
    if (typeof p === 'string') this.p = p;
    else [this.pAt, this.pLength] = [p, c.pl[i]!];
    const a = c.a[i]!;
    if (typeof a === 'string') this.a = a;
    else [this.aAt, this.aLength] = [a, c.al[i]!];
    const flags = c.flags[i]!;
    this.errorAnswer = (flags & 1) !== 0;
    this.notAnswered = (flags & 2) !== 0;
    this.alreadyAtService = (flags & 4) !== 0;
    this.answeredBy = flags & 8 ? 'user' : flags & 16 ? 'target' : undefined;
    this.failedStage = flags & 32 ? 'target' : flags & 64 ? 'submit' : undefined;
    this.rating = flags & 128 ? 'good' : flags & 256 ? 'bad' : undefined;
    const run = c.run[i]!;
    this.answerRun = run >= 0 ? c.runNames[run] : undefined;
    this.latencyMs = c.ms[i] ?? undefined;
    this.ttftMs = c.ft[i] ?? undefined;
    this.answeredAt = c.answeredAt[i] ?? undefined;
    this.submittedAt = c.submittedAt[i] ?? undefined;
    this.promptTokens = c.tp[i] ?? undefined;
    this.completionTokens = c.tc[i] ?? undefined;
    this.error = c.error[i] ?? undefined;
    this.note = c.note[i] ?? undefined;
  }
}

/**
 * Every trace of the store's index, a column per field (a 100,000-trace index parses as a few dozen arrays, not
 * 100,000 objects): a text is a place (offset; -1: none) or, rarely, the text itself; `flags` packs the booleans and
 * small choices (see Trace.writeTo); `run` indexes `runNames`.
 */
export interface TraceColumns {
  id: string[];
  state: number[];
  p: Array<number | string>;
  pl: number[];
  a: Array<number | string>;
  al: number[];
  flags: number[];
  run: number[];
  runNames: string[];
  ms: Array<number | null>;
  ft: Array<number | null>;
  answeredAt: Array<number | null>;
  submittedAt: Array<number | null>;
  tp: Array<number | null>;
  tc: Array<number | null>;
  error: Array<string | null>;
  note: Array<string | null>;
}

export const TRACE_COLUMNS = ['id', 'state', 'p', 'pl', 'a', 'al', 'flags', 'run', 'ms', 'ft', 'answeredAt', 'submittedAt', 'tp', 'tc', 'error', 'note'] as const;

const STATE_CODES = Object.fromEntries(LOCAL_STATES.map((s, i) => [s, i])) as Record<LocalTraceState, number>;

/** What the store is, as of some place in its journal: written beside the journal so opening reads only what follows. */
export interface StoreImage {
  listedTotal: number | null;
  promptsRecorded: boolean;
  runs: RunInfo[];
  traces: TraceColumns;
  /** The Batch API batches the journal tells of (open ones are taken up by the next run). */
  batches: BatchInfo[];
}

/** One run as the journal tells it: who answered, when, and what came of it. */
export interface RunInfo {
  runId: string;
  /** The target's description (never a secret). */
  target: string;
  fingerprint: string;
  /** What changes the target's answers, named; absent in runs recorded before 0.3. */
  facts?: Readonly<Record<string, string>>;
  mode: 'fresh' | 'reuse' | undefined;
  tool: string | undefined;
  /** "K/N" when the run was one shard of the evaluation. */
  shard?: string | undefined;
  startedAt: number;
  endedAt: number | undefined;
  outcome: string | undefined;
  /** Answers journaled, submissions accepted and traces failed while this run was the latest. */
  answered: number;
  submitted: number;
  failed: number;
  /** The latencies of the target's answers in this run (ms), for its percentiles (see runStats). */
  latencies: number[];
  /** Times to first token of the run's streamed answers (ms). */
  ttfts: number[];
  /** Waits for a free worker or slot before the target's answers (ms), where the target measured them; not latency. */
  queueWaits: number[];
  /** Per answer of a batch function, the size of the batch it was answered in. */
  batchSizes: number[];
  /** When each of the target's answers in this run was journaled (ms since the epoch), and those standing for an error. */
  answerTimes: number[];
  errorTimes: number[];
  /** When traces failed at the target in this run (no answer): the timeline shows them as errors too. */
  targetFailTimes: number[];
  /** When the target or the service answered with a rate limit (journaled with the run's end). */
  rateLimitTimes: number[];
  promptTokens: number;
  completionTokens: number;
  /** Answers whose target reported tokens. */
  usageReported: number;
  /** Failures and submitted target errors, by reason group. */
  errors: Record<string, number>;
  lastAnswerAt: number | undefined;
  /** When the run's submissions were held: the service down, or the token refused until a new one came. */
  holds?: Array<{ kind: 'outage' | 'token'; from: number; to: number; cause: string }>;
  /** Windows of the editor that attached to the run in its runner process (a reload, a window opened later), and let go. */
  windows?: WindowEvents;
  /** The list read again at the run's end differed: traces that appeared (run then) and vanished (reported). */
  listChanges?: { appeared: string[]; vanished: string[] };
}

/** How often windows attached to a run (reattached) and let go of it (a reload, a closed window), and the last time of each. */
export interface WindowEvents {
  attached: number;
  lastAttachedAt?: number;
  detached: number;
  lastDetachedAt?: number;
}

/** One Batch API batch as the journal tells it. */
export interface BatchInfo {
  /** The uploaded input file's id (the key). */
  file: string;
  /** The traces of the file's lines, in order: custom_id "t<i>" is ids[i]. */
  ids: string[];
  /** The batch's id, once it was created. */
  batch: string | undefined;
  /** Its final status once its results are all journaled, or "abandoned"; undefined: open (a run takes it up). */
  end: string | undefined;
  at: number;
}

export function emptyCounts(): StateCounts {
  return { pending: 0, running: 0, answered: 0, submitted: 0, failed: 0, skipped: 0 };
}

/**
 * The state of every trace of one evaluation, rebuilt from the journal and kept current by the engine.
 * Counts are maintained incrementally so progress at 100,000 traces costs nothing per event.
 */
export class TraceStore {
  private readonly watchers = new Set<(trace: TraceInfo | undefined) => void>();
  readonly traces = new Map<string, Trace>();
  /** Traces in the service's last list, when known. */
  listedTotal: number | undefined;
  /** The journal holds the service's prompt list (a prompts record), not only the prompts of answered traces. */
  promptsRecorded = false;
  /** Every run, oldest first. */
  readonly runs: RunInfo[] = [];
  // Answers name their run: looked up once per replayed answer, so by key, not by scanning every run.
  private readonly runIndex = new Map<string, RunInfo>();
  private readonly tally = emptyCounts();
  /** Batch API batches by input file id, oldest first (see the journal's batch record). */
  readonly batches = new Map<string, BatchInfo>();

  /** Where texts are read back from; none: the store holds every text (records applied without places). */
  private source: TextSource | undefined;

  /** Reads texts back from this journal: records applied with their places keep the places, not the texts. */
  readFrom(source: TextSource): this {
    this.source = source;
    return this;
  }

  get placed(): boolean {
    return this.source !== undefined;
  }

  /** Where this store reads texts back from (undefined: it holds them). */
  get textSource(): TextSource | undefined {
    return this.source;
  }

  /** A text at its place in the journal. */
  text(offset: number, length: number, field: 'p' | 'a'): string {
    return this.source!.read(offset, length, field);
  }

  /** Stops reading texts back (the journal is closed with the session, or the store replaced). */
  close(): void {
    this.source?.close();
  }

  /** The store as an image for its index (see storeIndex.ts). */
  image(): StoreImage {
    const n = this.traces.size;
    const columns = Object.fromEntries(TRACE_COLUMNS.map((k) => [k, new Array(n)])) as unknown as TraceColumns;
    columns.runNames = [];
    const names = new Map<string, number>();
    const runName = (run: string) => {
      let at = names.get(run);
      if (at === undefined) names.set(run, (at = columns.runNames.push(run) - 1));
      return at;
    };
    let i = 0;
    for (const trace of this.traces.values()) trace.writeTo(columns, i++, runName);
    return { listedTotal: this.listedTotal ?? null, promptsRecorded: this.promptsRecorded, runs: this.runs, traces: columns, batches: [...this.batches.values()] };
  }

  /** A store back from its image, reading its texts from `source`. */
  static fromImage(image: StoreImage, source: TextSource): TraceStore {
    const store = new TraceStore().readFrom(source);
    store.listedTotal = image.listedTotal ?? undefined;
    store.promptsRecorded = image.promptsRecorded;
    for (const batch of image.batches) store.batches.set(batch.file, batch);
    for (const run of image.runs) {
      store.runs.push(run);
      store.runIndex.set(run.runId, run);
    }
    const columns = image.traces;
    for (let i = 0; i < columns.id.length; i++) {
      const trace = store.ensure(columns.id[i]!);
      trace.readFrom(columns, i);
      store.tally.pending--;
      store.tally[trace.state]++;
    }
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
    return Math.max(this.listedTotal ?? 0, this.traces.size);
  }

  get(traceId: string): Trace | undefined {
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
      this.ensure(traceId).setPrompt(content, undefined);
    }
    this.listedTotal = seen.size;
    return duplicates;
  }

  /** The latest run: the target the journal's answers are held under now. */
  get currentRun(): RunInfo | undefined {
    return this.runs[this.runs.length - 1];
  }

  runById(runId: string | undefined): RunInfo | undefined {
    return runId === undefined ? undefined : this.runIndex.get(runId);
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
    let changed: Trace | undefined | null = null;
    // A list's items are told once, by the list's record after them.
    if (record.t === 'item') return;
    if ('id' in record) changed = this.traces.get(record.id) ?? null;
    else if (record.t === 'prompts' || record.t === 'list' || (record.t === 'run' && record.mode === 'fresh')) changed = undefined;
    if (changed !== null) this.tell(changed);
  }

  private tell(changed: TraceInfo | undefined): void {
    for (const watcher of this.watchers) watcher(changed);
  }

  /** A record written with its texts is on disk at `at`: the store keeps the place instead of the texts. */
  settle(record: JournalRecord, at: RecordLocation | undefined): void {
    if (!at || !this.source || !('id' in record)) return;
    this.traces.get(record.id)?.settle(record, at, this.source);
  }

  private applyRecord(record: JournalRecord, at: RecordLocation | undefined): void {
    switch (record.t) {
      case 'run':
        return this.applyRun(record);
      case 'end':
        return this.applyEnd(record);
      case 'window':
        return this.applyWindow(record);
      case 'prompts':
        this.setListed(record.items);
        this.promptsRecorded = true;
        return;
      case 'item':
        this.ensure(record.id).setPrompt(record.p, at);
        return;
      case 'list':
        this.listedTotal = record.total;
        if (record.full) this.promptsRecorded = true;
        return;
      case 'answer':
        return this.applyAnswer(record, at);
      case 'verdict': {
        const info = this.traces.get(record.id);
        if (!info) return;
        info.rating = record.rating;
        info.note = record.note || undefined;
        return;
      }
      case 'submitted':
        return this.applySubmitted(record);
      case 'failed':
        return this.applyFailed(record, at);
      case 'skipped': {
        const info = this.ensure(record.id);
        info.error = record.reason;
        this.move(info, 'skipped');
        return;
      }
      case 'batch':
        return this.applyBatch(record);
    }
  }

  /** A Batch API batch's records, merged by input file: the first holds the traces, later ones the id and the end. */
  private applyBatch(record: Extract<JournalRecord, { t: 'batch' }>): void {
    const known = this.batches.get(record.file);
    if (!known) {
      if (!record.ids) return; // a later record whose first was lost: nothing to take up
      this.batches.set(record.file, { file: record.file, ids: record.ids, batch: record.batch, end: record.end, at: record.at });
      return;
    }
    if (record.batch) known.batch = record.batch;
    if (record.end) known.end = record.end;
  }

  private applyRun(record: Extract<JournalRecord, { t: 'run' }>): void {
    const run: RunInfo = {
      runId: record.run ?? `legacy-${this.runs.length + 1}`,
      target: record.target ?? 'unknown target',
      fingerprint: record.fp ?? legacyFingerprint(record.target),
      mode: record.mode,
      ...(record.facts ? { facts: record.facts } : {}),
      tool: record.tool,
      shard: record.shard,
      startedAt: record.at,
      endedAt: undefined,
      outcome: undefined,
      answered: 0,
      submitted: 0,
      failed: 0,
      latencies: [],
      answerTimes: [],
      errorTimes: [],
      rateLimitTimes: [],
      ttfts: [],
      queueWaits: [],
      batchSizes: [],
      targetFailTimes: [],
      promptTokens: 0,
      completionTokens: 0,
      usageReported: 0,
      errors: {},
      lastAnswerAt: undefined,
    };
    this.runs.push(run);
    this.runIndex.set(run.runId, run);
    // A fresh run answers everything again: what came before is set aside (skips are a person's call and stay).
    if (record.mode === 'fresh') this.setAsideAnswers();
  }

  private applyEnd(record: Extract<JournalRecord, { t: 'end' }>): void {
    const run = this.runById(record.run);
    if (!run) return;
    run.endedAt = record.at;
    run.outcome = record.outcome;
    if (record.limited) run.rateLimitTimes = record.limited;
    if (record.holds?.length) run.holds = record.holds;
    if (record.appeared?.length || record.vanished?.length) run.listChanges = { appeared: record.appeared ?? [], vanished: record.vanished ?? [] };
  }

  private applyWindow(record: Extract<JournalRecord, { t: 'window' }>): void {
    const run = this.runById(record.run);
    if (!run) return;
    const w = (run.windows ??= { attached: 0, detached: 0 });
    if (record.ev === 'attached') {
      w.attached++;
      w.lastAttachedAt = record.at;
    } else {
      w.detached++;
      w.lastDetachedAt = record.at;
    }
  }

  private applyAnswer(record: Extract<JournalRecord, { t: 'answer' }>, at: RecordLocation | undefined): void {
    const info = this.ensure(record.id);
    if (!info.hasPrompt && record.p !== undefined) info.setPrompt(record.p, at);
    // A verdict is about one answer: a changed answer needs a new one (the old text is read only when there is one).
    if ((info.rating !== undefined || info.note !== undefined) && info.answer !== record.a) {
      info.rating = undefined;
      info.note = undefined;
    }
    info.setAnswer(record.a, at);
    info.promptTokens = record.tp;
    info.completionTokens = record.tc;
    info.errorAnswer = record.err ?? false;
    info.notAnswered = record.na ?? false;
    info.answeredBy = record.by ?? 'target';
    info.latencyMs = record.ms;
    info.ttftMs = record.ft;
    info.answeredAt = record.at;
    info.alreadyAtService = false;
    info.error = undefined;
    info.failedStage = undefined;
    info.answerRun = record.run ?? this.currentRun?.runId;
    const run = record.run ? this.runById(record.run) : this.currentRun;
    if (run) this.count(run, record);
    this.move(info, 'answered');
  }

  private applySubmitted(record: Extract<JournalRecord, { t: 'submitted' }>): void {
    const info = this.ensure(record.id);
    info.submittedAt = record.at;
    info.alreadyAtService = record.dup === true;
    info.error = undefined;
    info.failedStage = undefined;
    if (this.currentRun) this.currentRun.submitted++;
    this.move(info, 'submitted');
  }

  private applyFailed(record: Extract<JournalRecord, { t: 'failed' }>, at: RecordLocation | undefined): void {
    const info = this.ensure(record.id);
    if (!info.hasPrompt && record.p !== undefined) info.setPrompt(record.p, at);
    info.error = record.reason;
    info.failedStage = record.stage;
    if (this.currentRun) {
      this.currentRun.failed++;
      const group = errorGroup(record.reason);
      this.currentRun.errors[group] = (this.currentRun.errors[group] ?? 0) + 1;
      if (record.stage === 'target') this.currentRun.targetFailTimes.push(record.at);
    }
    this.move(info, 'failed');
  }

  private count(run: RunInfo, record: Extract<JournalRecord, { t: 'answer' }>): void {
    run.answered++;
    if (record.by === 'user') return;
    run.answerTimes.push(record.at);
    if (record.err) {
      run.errors[record.a] = (run.errors[record.a] ?? 0) + 1;
      run.errorTimes.push(record.at);
    } else if (record.ms !== undefined) run.latencies.push(record.ms);
    if (record.ft !== undefined && !record.err) run.ttfts.push(record.ft);
    if (record.qw !== undefined && !record.err) run.queueWaits.push(record.qw);
    if (record.bs !== undefined && !record.err) run.batchSizes.push(record.bs);
    if (record.tp !== undefined || record.tc !== undefined) {
      run.usageReported++;
      run.promptTokens += record.tp ?? 0;
      run.completionTokens += record.tc ?? 0;
    }
    run.lastAnswerAt = record.at;
  }

  private setAsideAnswers(): void {
    for (const info of this.traces.values()) {
      if (info.state === 'skipped') continue;
      info.setAnswer(undefined, undefined);
      info.errorAnswer = false;
      info.notAnswered = false;
      info.answeredBy = undefined;
      info.error = undefined;
      info.failedStage = undefined;
      info.latencyMs = undefined;
      info.ttftMs = undefined;
      info.answeredAt = undefined;
      info.submittedAt = undefined;
      info.alreadyAtService = false;
      info.answerRun = undefined;
      info.promptTokens = undefined;
      info.completionTokens = undefined;
      info.rating = undefined;
      info.note = undefined;
      this.move(info, 'pending');
    }
  }

  /** Moves a trace to a state that the journal does not record (running, or back to pending). */
  setTransient(traceId: string, state: 'running' | 'pending'): void {
    const info = this.traces.get(traceId);
    if (!info) return;
    this.move(info, state);
    if (this.watchers.size) this.tell(info);
  }

  private ensure(traceId: string): Trace {
    let info = this.traces.get(traceId);
    if (!info) {
      info = new Trace(traceId, this);
      this.traces.set(traceId, info);
      this.tally.pending++;
    }
    return info;
  }

  private move(info: Trace, state: LocalTraceState): void {
    this.tally[info.state]--;
    info.state = state;
    this.tally[state]++;
  }

  /** Counts with the traces listed but never seen counted as pending. */
  snapshotCounts(): StateCounts {
    const counts = { ...this.tally };
    counts.pending += Math.max(0, (this.listedTotal ?? 0) - this.traces.size);
    return counts;
  }
}
