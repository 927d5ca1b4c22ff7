import type { RecordLocation } from '../journal/journal';
import type { TextSource } from '../journal/journalText';
import type { Verdict } from '../journal/journalRecords';
import { RowsById } from './rowsById';

/** Local trace states; the labels match the service's words where they mean the same thing. */
export const LOCAL_STATES = ['pending', 'running', 'answered', 'submitted', 'failed', 'skipped'] as const;
export type LocalTraceState = (typeof LOCAL_STATES)[number];

export interface TraceInfo {
  readonly traceId: string;
  /** The prompt's text, read from the journal when asked for (a small cache keeps the last ones read). */
  readonly prompt: string | undefined;
  readonly state: LocalTraceState;
  /** The answer's text, read like the prompt's. */
  readonly answer: string | undefined;
  /** Whether there is a prompt or an answer, without reading it. */
  readonly hasPrompt: boolean;
  readonly hasAnswer: boolean;
  /** The answer is the target's refusal or error text (onTargetError: submit). */
  readonly errorAnswer: boolean;
  /** The answer is the not-answered text of a skipped trace (Submit as Not Answered). */
  readonly notAnswered: boolean;
  readonly answeredBy: 'target' | 'user' | undefined;
  /** Why the trace failed or was skipped. */
  readonly error: string | undefined;
  readonly failedStage: 'target' | 'submit' | undefined;
  readonly latencyMs: number | undefined;
  /** Time to first token, when the answer was streamed. */
  readonly ttftMs: number | undefined;
  readonly answeredAt: number | undefined;
  readonly submittedAt: number | undefined;
  /** The service answered 409: it already held an answer for the trace (a reply lost, another run's), counted apart. */
  readonly alreadyAtService: boolean;
  /** The run whose target (or reviewer) gave the answer. */
  readonly answerRun: string | undefined;
  /** Tokens the answer cost, where the target reported them. */
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
  /** A reviewer's verdict on the current answer and note (local only); cleared when the answer changes. */
  readonly rating: Verdict | undefined;
  readonly note: string | undefined;
}

/**
 * Every trace of a store, a column per field: a row is a trace. The same columns are the index's image (see
 * storeIndex.ts), so opening an evaluation maps them from the index rather than building 100,000 objects, and a
 * trace costs some 60 bytes of numbers beside its id, not a few hundred bytes of object.
 * - a text is a place in the journal (offset; -1: none; -2: the text itself, held in `held` until it is on disk);
 * - `flags` packs the booleans and small choices (FLAG below);
 * - `run` indexes `runNames` (-1: none);
 * - a nullable number is NaN for none, and its column is absent while no trace has one;
 * - errors and notes, rare, are kept by row.
 */
export interface TraceColumns {
  id: string[];
  runNames: string[];
  state: Uint8Array;
  flags: Uint16Array;
  run: Int32Array;
  p: Float64Array;
  pl: Uint32Array;
  a: Float64Array;
  al: Uint32Array;
  ms: Float64Array | undefined;
  ft: Float64Array | undefined;
  answeredAt: Float64Array | undefined;
  submittedAt: Float64Array | undefined;
  tp: Float64Array | undefined;
  tc: Float64Array | undefined;
  held: { p: Record<number, string>; a: Record<number, string> };
  error: Record<number, string>;
  note: Record<number, string>;
}

/** The numeric columns, in the order the index writes them. */
export const NUMBER_COLUMNS = ['state', 'flags', 'run', 'pl', 'al', 'p', 'a', 'ms', 'ft', 'answeredAt', 'submittedAt', 'tp', 'tc'] as const;
export type NullableColumn = 'ms' | 'ft' | 'answeredAt' | 'submittedAt' | 'tp' | 'tc';
const NULLABLE: readonly NullableColumn[] = ['ms', 'ft', 'answeredAt', 'submittedAt', 'tp', 'tc'];
const FIXED = ['state', 'flags', 'run', 'p', 'pl', 'a', 'al'] as const;

export const FLAG = { errorAnswer: 1, notAnswered: 2, alreadyAtService: 4, byUser: 8, byTarget: 16, failedAtTarget: 32, failedAtSubmit: 64, good: 128, bad: 256 } as const;
const BY = FLAG.byUser | FLAG.byTarget;
const STAGE = FLAG.failedAtTarget | FLAG.failedAtSubmit;
export const RATING = FLAG.good | FLAG.bad;

export const STATE_CODES = Object.fromEntries(LOCAL_STATES.map((s, i) => [s, i])) as Record<LocalTraceState, number>;
const HELD = -2;

/** Columns for `n` traces (every text nowhere, every number none), nullable ones absent until a value comes. */
export function newColumns(n: number): TraceColumns {
  return {
    id: new Array<string>(n),
    runNames: [],
    state: new Uint8Array(n),
    flags: new Uint16Array(n),
    run: new Int32Array(n).fill(-1),
    p: new Float64Array(n).fill(-1),
    pl: new Uint32Array(n),
    a: new Float64Array(n).fill(-1),
    al: new Uint32Array(n),
    ms: undefined,
    ft: undefined,
    answeredAt: undefined,
    submittedAt: undefined,
    tp: undefined,
    tc: undefined,
    held: { p: {}, a: {} },
    error: {},
    note: {},
  };
}

/** The store's rows: columns with room to grow, a row per trace id, and a view object per row once asked for. */
export class TraceRows {
  n = 0;
  c: TraceColumns;
  source: TextSource | undefined;
  private readonly rowOf = new RowsById(() => this.c.id);
  private readonly runAt = new Map<string, number>();
  private views: Array<Trace | undefined> = [];

  constructor(columns: TraceColumns = newColumns(0)) {
    this.c = columns;
    this.n = columns.id.length;
    columns.runNames.forEach((name, i) => this.runAt.set(name, i));
  }

  row(traceId: string): number | undefined {
    return this.rowOf.get(traceId);
  }

  /** The row of a trace, a new one (pending, nothing known) when it has none. */
  add(traceId: string): number {
    const known = this.rowOf.get(traceId);
    if (known !== undefined) return known;
    if (this.n === this.c.state.length) this.grow();
    const i = this.n++;
    this.c.id[i] = traceId;
    this.rowOf.set(traceId, i);
    return i;
  }

  view(i: number): Trace {
    return (this.views[i] ??= new Trace(this, i));
  }

  /** Row i's view without keeping it (the kept one if there is one): a run's queue, reached once per trace (runPlan.ts). */
  peek(i: number): Trace {
    return this.views[i] ?? new Trace(this, i);
  }

  /** Every row's view, not kept (a status or an export walks them all once), rows added while iterating included. */
  *values(): IterableIterator<Trace> {
    for (let i = 0; i < this.n; i++) yield this.peek(i);
  }

  private grow(): void {
    const size = Math.max(1024, this.c.state.length * 2);
    for (const name of FIXED) this.c[name] = widened(this.c[name], size, name === 'p' || name === 'a' || name === 'run' ? -1 : 0) as never;
    for (const name of NULLABLE) if (this.c[name]) this.c[name] = widened(this.c[name], size, NaN);
  }

  /**
   * The columns cut to the rows there are, once the list is whole: doubling left room for up to twice as many (600,000
   * traces: 1,048,576 rows, 25 MB more), and the columns a run makes later (its latencies, times) take that size too.
   */
  fit(): void {
    if (this.c.state.length === this.n) return;
    for (const name of FIXED) this.c[name] = this.c[name].slice(0, this.n) as never;
    for (const name of NULLABLE) if (this.c[name]) this.c[name] = this.c[name].slice(0, this.n);
  }

  text(i: number, field: 'p' | 'a'): string | undefined {
    const at = this.c[field][i]!;
    if (at === HELD) return this.c.held[field][i];
    return at >= 0 ? this.source!.read(at, (field === 'p' ? this.c.pl : this.c.al)[i]!, field) : undefined;
  }

  /** A text: its place in the journal when it is there (and the store reads from it), else the text itself. */
  setText(i: number, field: 'p' | 'a', text: string | undefined, at: RecordLocation | undefined): void {
    if (text !== undefined && at && this.source) {
      this.setPlace(i, field, at.offset, at.length);
    } else if (text !== undefined) {
      this.c.held[field][i] = text;
      this.c[field][i] = HELD;
    } else {
      this.unhold(i, field);
      this.c[field][i] = -1;
    }
  }

  /** A text kept as its place in the journal (its line's offset and length), no longer held. */
  setPlace(i: number, field: 'p' | 'a', offset: number, length: number): void {
    this.unhold(i, field);
    this.c[field][i] = offset;
    (field === 'p' ? this.c.pl : this.c.al)[i] = length;
  }

  /** A held text let go; a row that holds none deletes nothing (a delete per text cost a run a runtime call each). */
  private unhold(i: number, field: 'p' | 'a'): void {
    if (this.c[field][i] === HELD) delete this.c.held[field][i];
  }

  held(i: number, field: 'p' | 'a'): string | undefined {
    return this.c[field][i] === HELD ? this.c.held[field][i] : undefined;
  }

  number(name: NullableColumn, i: number): number | undefined {
    const v = this.c[name]?.[i];
    return v === undefined || Number.isNaN(v) ? undefined : v;
  }

  /** Sets a nullable number (undefined: none), making its column at the first value. */
  setNumber(name: NullableColumn, i: number, v: number | undefined): void {
    if (v === undefined) {
      if (this.c[name]) this.c[name][i] = NaN;
      return;
    }
    (this.c[name] ??= new Float64Array(this.c.state.length).fill(NaN))[i] = v;
  }

  setFlags(i: number, clear: number, set: number): void {
    this.c.flags[i] = (this.c.flags[i]! & ~clear) | set;
  }

  setRun(i: number, runId: string | undefined): void {
    if (runId === undefined) {
      this.c.run[i] = -1;
      return;
    }
    let at = this.runAt.get(runId);
    if (at === undefined) this.runAt.set(runId, (at = this.c.runNames.push(runId) - 1));
    this.c.run[i] = at;
  }

  /** The run whose target (or reviewer) gave the row's answer. */
  runOf(i: number): string | undefined {
    const run = this.c.run[i]!;
    return run >= 0 ? this.c.runNames[run] : undefined;
  }

  /** Rows with a flag of `mask` in a state of `codes`. */
  countWith(mask: number, codes: readonly number[]): number {
    const { flags, state } = this.c;
    let n = 0;
    for (let i = 0; i < this.n; i++) if ((flags[i]! & mask) !== 0 && codes.includes(state[i]!)) n++;
    return n;
  }

  setKept(field: 'error' | 'note', i: number, text: string | undefined): void {
    if (text === undefined) delete this.c[field][i];
    else this.c[field][i] = text;
  }

  /** The columns as the index keeps them: `n` rows, a trace in flight waiting again for whoever opens it next. */
  image(): TraceColumns {
    const n = this.n;
    const cut = <T extends Float64Array | Uint8Array | Uint16Array | Uint32Array | Int32Array>(a: T): T => a.subarray(0, n) as T;
    const state = this.c.state.slice(0, n);
    for (let i = 0; i < n; i++) if (state[i] === STATE_CODES.running) state[i] = STATE_CODES.pending;
    const c = this.c;
    return {
      ...c,
      id: c.id.slice(0, n),
      runNames: [...c.runNames],
      state,
      flags: cut(c.flags),
      run: cut(c.run),
      p: cut(c.p),
      pl: cut(c.pl),
      a: cut(c.a),
      al: cut(c.al),
      ms: c.ms && cut(c.ms),
      ft: c.ft && cut(c.ft),
      answeredAt: c.answeredAt && cut(c.answeredAt),
      submittedAt: c.submittedAt && cut(c.submittedAt),
      tp: c.tp && cut(c.tp),
      tc: c.tc && cut(c.tc),
    };
  }
}

function widened<T extends Float64Array | Uint8Array | Uint16Array | Uint32Array | Int32Array>(column: T, size: number, fill: number): T {
  const bigger = new (column.constructor as new (n: number) => T)(size);
  bigger.set(column);
  if (fill !== 0) bigger.fill(fill, column.length);
  return bigger;
}

/**
 * A trace as views see it: a row of the store's columns, read when asked. Its state and figures, and where its prompt
 * and answer are in the journal, not the texts (100,000 traces of 2 KB prompts and answers would be 400 MB of text).
 * One view per row, made when first asked for, so a trace is the same object every time.
 */
class Trace implements TraceInfo {
  constructor(
    private readonly rows: TraceRows,
    private readonly i: number,
  ) {}

  get traceId(): string {
    return this.rows.c.id[this.i]!;
  }

  get state(): LocalTraceState {
    return LOCAL_STATES[this.rows.c.state[this.i]!]!;
  }

  get prompt(): string | undefined {
    return this.rows.text(this.i, 'p');
  }

  get answer(): string | undefined {
    return this.rows.text(this.i, 'a');
  }

  get hasPrompt(): boolean {
    return this.rows.c.p[this.i] !== -1;
  }

  get hasAnswer(): boolean {
    return this.rows.c.a[this.i] !== -1;
  }

  private flag(mask: number): number {
    return this.rows.c.flags[this.i]! & mask;
  }

  get errorAnswer(): boolean {
    return this.flag(FLAG.errorAnswer) !== 0;
  }

  get notAnswered(): boolean {
    return this.flag(FLAG.notAnswered) !== 0;
  }

  get alreadyAtService(): boolean {
    return this.flag(FLAG.alreadyAtService) !== 0;
  }

  get answeredBy(): 'target' | 'user' | undefined {
    const by = this.flag(BY);
    return by === FLAG.byUser ? 'user' : by === FLAG.byTarget ? 'target' : undefined;
  }

  get failedStage(): 'target' | 'submit' | undefined {
    const stage = this.flag(STAGE);
    return stage === FLAG.failedAtTarget ? 'target' : stage === FLAG.failedAtSubmit ? 'submit' : undefined;
  }

  get rating(): Verdict | undefined {
    const rating = this.flag(RATING);
    return rating === FLAG.good ? 'good' : rating === FLAG.bad ? 'bad' : undefined;
  }

  get answerRun(): string | undefined {
    return this.rows.runOf(this.i);
  }

  get latencyMs(): number | undefined {
    return this.rows.number('ms', this.i);
  }

  get ttftMs(): number | undefined {
    return this.rows.number('ft', this.i);
  }

  get answeredAt(): number | undefined {
    return this.rows.number('answeredAt', this.i);
  }

  get submittedAt(): number | undefined {
    return this.rows.number('submittedAt', this.i);
  }

  get promptTokens(): number | undefined {
    return this.rows.number('tp', this.i);
  }

  get completionTokens(): number | undefined {
    return this.rows.number('tc', this.i);
  }

  get error(): string | undefined {
    return this.rows.c.error[this.i];
  }

  get note(): string | undefined {
    return this.rows.c.note[this.i];
  }

  /** The fields as plain data (a view's own properties are only its place; tests and logs want the values). */
  toJSON(): Omit<TraceInfo, 'prompt' | 'answer'> {
    const { traceId, state, hasPrompt, hasAnswer, errorAnswer, notAnswered, answeredBy, error, failedStage, latencyMs, ttftMs, answeredAt, submittedAt, alreadyAtService, answerRun, promptTokens, completionTokens, rating, note } = this;
    return { traceId, state, hasPrompt, hasAnswer, errorAnswer, notAnswered, answeredBy, error, failedStage, latencyMs, ttftMs, answeredAt, submittedAt, alreadyAtService, answerRun, promptTokens, completionTokens, rating, note };
  }
}

export type { Trace };
