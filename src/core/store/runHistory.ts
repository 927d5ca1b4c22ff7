import type { RecordLocation } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import { errorGroup } from './errorGroups';
import { legacyFingerprint } from '../targets/targetSpec';
import { ANSWER_FLAG, RunAnswers } from './runAnswers';
import type { RunAnswersImage } from './runAnswers';

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
  /** Of promptTokens, those read from the provider's cache. */
  cachedTokens: number;
  /** The run's journaled prices (its record's), for its cost (src/core/cost/runCost.ts). */
  price?: Rec<'run'>['price'];
  /** The run's budget stop, as journaled with its end. */
  budget?: Rec<'end'>['budget'];
  /** Answers whose target reported tokens. */
  usageReported: number;
  /** Failures and submitted target errors, by reason group. */
  errors: Record<string, number>;
  lastAnswerAt: number | undefined;
  /** When the run's submissions were held: the service down, or the token refused until a new one came. */
  holds?: Array<{ kind: 'outage' | 'token'; from: number; to: number; cause: string }>;
  /** Windows of the editor that attached to the run in its runner process (a reload, a window opened later), and let go. */
  windows?: WindowEvents;
  /** Pauses, resumes and concurrency changes made while the run went on, in order (the first 1,000). */
  steers?: Array<{ at: number; ev: 'pause' | 'resume' | 'concurrency'; n?: number }>;
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

type Rec<T extends JournalRecord['t']> = Extract<JournalRecord, { t: T }>;

/**
 * Every run of one evaluation, oldest first, and what each did: the store tells it the journal's records about runs,
 * and those of the traces' answers, submissions and failures, which count for the run that made them (or the latest).
 */
export class RunHistory {
  readonly runs: RunInfo[] = [];
  // Answers name their run: looked up once per replayed answer, so by key, not by scanning every run.
  private readonly index = new Map<string, RunInfo>();
  /** Each run's answers: where each is in the journal and a digest of it (Compare Runs looks them up). */
  private readonly answers = new Map<string, RunAnswers>();

  constructor(runs: readonly RunInfo[] = [], answers: readonly RunAnswersImage[] = []) {
    for (const run of runs) this.add(run);
    for (const { run, ...columns } of answers) this.answers.set(run, new RunAnswers(columns));
  }

  /** The run's answers (undefined: it answered nothing, or there is no such run). */
  answersOf(runId: string): RunAnswers | undefined {
    return this.answers.get(runId);
  }

  /** Every run's answers, for the index. */
  answersImage(): RunAnswersImage[] {
    return [...this.answers].map(([run, answers]) => ({ run, ...answers.columns() }));
  }

  /** The latest run: the target the journal's answers are held under now. */
  get current(): RunInfo | undefined {
    return this.runs[this.runs.length - 1];
  }

  byId(runId: string | undefined): RunInfo | undefined {
    return runId === undefined ? undefined : this.index.get(runId);
  }

  private add(run: RunInfo): void {
    this.runs.push(run);
    this.index.set(run.runId, run);
  }

  started(record: Rec<'run'>): void {
    this.add({
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
      cachedTokens: 0,
      ...(record.price ? { price: record.price } : {}),
      usageReported: 0,
      errors: {},
      lastAnswerAt: undefined,
    });
  }

  ended(record: Rec<'end'>): void {
    const run = this.byId(record.run);
    if (!run) return;
    run.endedAt = record.at;
    run.outcome = record.outcome;
    if (record.limited) run.rateLimitTimes = record.limited;
    if (record.holds?.length) run.holds = record.holds;
    if (record.budget) run.budget = record.budget;
    if (record.appeared?.length || record.vanished?.length) run.listChanges = { appeared: record.appeared ?? [], vanished: record.vanished ?? [] };
  }

  window(record: Rec<'window'>): void {
    const run = this.byId(record.run);
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

  steered(record: Rec<'steer'>): void {
    const run = this.byId(record.run);
    if (!run) return;
    const steers = (run.steers ??= []);
    if (steers.length < 1000) steers.push({ at: record.at, ev: record.ev, ...(record.n !== undefined ? { n: record.n } : {}) });
  }

  /**
   * An answer, counted for the run it names (the latest when it names none), and kept as that run's answer to the
   * trace at `row`: at its place `at` in the journal, or held until settled() tells where it was written. `rows`: the
   * store's traces (see RunAnswers.add).
   */
  answered(record: Rec<'answer'>, row = -1, at?: RecordLocation, rows = 0): void {
    const run = record.run ? this.byId(record.run) : this.current;
    if (!run) return;
    run.answered++;
    if (row >= 0) {
      let answers = this.answers.get(run.runId);
      if (!answers) this.answers.set(run.runId, (answers = new RunAnswers()));
      answers.add(row, record.a, at, record.ms, (record.err ? ANSWER_FLAG.err : 0) | (record.by === 'user' ? ANSWER_FLAG.user : 0), rows);
    }
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
      run.cachedTokens += record.tk ?? 0;
    }
    run.lastAnswerAt = record.at;
  }

  /** An answer applied before it was on disk is at `at` now. */
  settled(record: Rec<'answer'>, row: number, at: RecordLocation): void {
    const run = record.run ? this.byId(record.run) : this.current;
    if (run) this.answers.get(run.runId)?.settle(row, at);
  }

  submitted(): void {
    if (this.current) this.current.submitted++;
  }

  failed(record: Rec<'failed'>): void {
    const run = this.current;
    if (!run) return;
    run.failed++;
    const group = errorGroup(record.reason);
    run.errors[group] = (run.errors[group] ?? 0) + 1;
    if (record.stage === 'target') run.targetFailTimes.push(record.at);
  }
}
