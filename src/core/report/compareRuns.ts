import { hash } from 'node:crypto';
import { readJournalLines } from '../journal/journal';
import type { RecordLocation } from '../journal/journal';
import { parseLine } from '../journal/journalRecords';
import type { JournalRecord } from '../journal/journalRecords';
import type { TextSource } from '../journal/journalText';
import type { TraceStore } from '../store/traceStore';

/** One run's answer to one trace, as journaled: the text is read from the journal when asked for. */
export interface RunAnswer {
  readonly answer: string;
  latencyMs: number | undefined;
  errorAnswer: boolean;
  by: 'target' | 'user';
}

export interface ComparedTrace {
  traceId: string;
  readonly prompt: string | undefined;
  a: RunAnswer | undefined;
  b: RunAnswer | undefined;
  /** Both runs answered and the answers differ, or only one of them answered. */
  differs: boolean;
}

/** An answer kept as its place and a digest of its text (whether two runs' answers differ needs no text kept). */
class PlacedAnswer implements RunAnswer {
  constructor(
    private readonly source: TextSource,
    private readonly at: RecordLocation,
    readonly digest: string,
    readonly latencyMs: number | undefined,
    readonly errorAnswer: boolean,
    readonly by: 'target' | 'user',
  ) {}

  get answer(): string {
    return this.source.read(this.at.offset, this.at.length, 'a');
  }
}

/** What the comparison keeps of an answer record: its trace, run, figures and a digest of its text. */
interface AnswerFacts {
  id: string;
  run: string | undefined;
  digest: string;
  ms: number | undefined;
  err: boolean;
  by: 'target' | 'user';
}

/**
 * Every trace's answers in two runs of one evaluation, from the journal alone (it keeps every run's answers; no
 * service call), read through once: an answer belongs to the run it names, or (older records) to the run that was
 * latest when it was written; a run's last answer to a trace is its answer. Only places and digests are kept, so
 * 100,000 traces of 2 KB answers cost a few megabytes; `store` (the session's, read up to date) gives the order, the
 * prompts, and reads the answers back. Lines are read as bytes: only answer and run records are looked at, and an
 * answer's text is digested as it is written (never decoded), so 100,000 × 2 KB compare in a fraction of a second.
 */
export async function compareRuns(journalFile: string, store: TraceStore, source: TextSource, runA: string, runB: string): Promise<ComparedTrace[]> {
  const answers = new Map<string, Map<string, PlacedAnswer>>([
    [runA, new Map()],
    [runB, new Map()],
  ]);
  let runs = 0;
  let current: string | undefined;
  await readJournalLines(journalFile, (bytes, from, to, at) => {
    const type = recordType(bytes, from);
    // Records of other types are skipped unread: the prompts, submissions, verdicts (most of the journal's bytes).
    if (type !== undefined && type !== 'answer' && type !== 'run') return;
    const facts = type === 'answer' ? answerFacts(bytes.subarray(from, to)) : undefined;
    const record = facts ? undefined : parseLine(bytes.toString('utf8', from, to));
    if (record?.t === 'run') {
      // The same ids the store gives runs recorded without one.
      current = record.run ?? `legacy-${++runs}`;
      if (record.run) runs++;
    }
    const answer = facts ?? (record?.t === 'answer' ? factsOf(record) : undefined);
    if (!answer) return;
    answers.get(answer.run ?? current ?? '')?.set(answer.id, new PlacedAnswer(source, at, answer.digest, answer.ms, answer.err, answer.by));
  });
  const out: ComparedTrace[] = [];
  for (const info of store.traces.values()) {
    const a = answers.get(runA)!.get(info.traceId);
    const b = answers.get(runB)!.get(info.traceId);
    if (!a && !b) continue;
    out.push({
      traceId: info.traceId,
      get prompt() {
        return info.prompt;
      },
      a,
      b,
      differs: a?.digest !== b?.digest,
    });
  }
  return out;
}

const TYPE_PREFIX = Buffer.from('{"t":"');
const ANSWER_KEY = Buffer.from('"a":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The record's type when its line starts with it, as the journal writes every record (undefined: look inside). */
function recordType(bytes: Buffer, from: number): string | undefined {
  if (bytes.compare(TYPE_PREFIX, 0, TYPE_PREFIX.length, from, from + TYPE_PREFIX.length) !== 0) return undefined;
  const start = from + TYPE_PREFIX.length;
  const end = bytes.indexOf(QUOTE, start);
  return end > start && end - start < 32 ? bytes.toString('latin1', start, end) : undefined;
}

/**
 * An answer line's facts without decoding its text: the answer's JSON string is digested as written, and the line
 * without it (a few dozen bytes) is parsed. Undefined when the line is not as expected: it is then parsed whole.
 */
function answerFacts(line: Buffer): AnswerFacts | undefined {
  const key = line.indexOf(ANSWER_KEY);
  if (key < 0) return undefined;
  const start = key + ANSWER_KEY.length;
  let end = line.indexOf(QUOTE, start);
  while (end > 0 && escaped(line, end)) end = line.indexOf(QUOTE, end + 1);
  if (end < 0) return undefined;
  // The line without its text: a few dozen bytes, its fields checked here (a line not as expected is read whole).
  let rest: unknown;
  try {
    rest = JSON.parse(`${line.toString('utf8', 0, key)}"a":""${line.toString('utf8', end + 1)}`);
  } catch {
    return undefined;
  }
  const r = rest as Partial<Record<'t' | 'id' | 'run' | 'ms' | 'err' | 'by', unknown>>;
  if (r.t !== 'answer' || typeof r.id !== 'string' || !optional(r.run, 'string') || !optional(r.ms, 'number') || !optional(r.err, 'boolean')) return undefined;
  const by = r.by === 'user' ? 'user' : 'target';
  return { id: r.id, run: r.run as string | undefined, digest: digest(line.subarray(start, end)), ms: r.ms as number | undefined, err: r.err === true, by };
}

function optional(value: unknown, type: 'string' | 'number' | 'boolean'): boolean {
  return value === undefined || typeof value === type;
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function escaped(line: Buffer, at: number): boolean {
  let n = 0;
  while (at - n - 1 >= 0 && line[at - n - 1] === BACKSLASH) n++;
  return n % 2 === 1;
}

/** A parsed answer record's facts; its text digested as the journal writes it (JSON), as answerFacts does. */
function factsOf(record: Extract<JournalRecord, { t: 'answer' }>): AnswerFacts {
  return { id: record.id, run: record.run, digest: digest(JSON.stringify(record.a).slice(1, -1)), ms: record.ms, err: record.err ?? false, by: record.by ?? 'target' };
}

function digest(text: string | Buffer): string {
  return hash('sha256', text, 'base64');
}
