import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import type { EvaluationKind } from '../api/kinds';
import { NODE_FS, asStorageError } from './storage';
import type { JournalFileHandle, JournalFs } from './storage';

/**
 * One append-only JSONL file per (service origin, kind, evaluation). Every record is one line; the last
 * record about a trace decides its state. Never holds the service token or a target's key: callers only
 * ever hand it trace ids, prompts, answers and reasons.
 */
export type JournalRecord =
  /**
   * The start of a run. `run` is its id, `fp` the fingerprint of its target (see targetIdentity) and `target`
   * its description; `mode` fresh: every answer before it is set aside; reuse: answers of another target kept.
   * Records written before runs had identities carry only `at` and `target`.
   */
  | {
      t: 'run';
      at: number;
      run?: string;
      fp?: string;
      target?: string;
      tool?: string;
      mode?: 'fresh' | 'reuse';
      origin?: string;
      kind?: EvaluationKind;
      evaluationId?: number;
    }
  /** The end of a run; the traces the list gained or lost while it ran (see listAgain in the engine). */
  | { t: 'end'; run: string; at: number; outcome: string; appeared?: string[]; vanished?: string[] }
  /** The service's prompt list, when it differs from the one the journal holds. */
  | { t: 'prompts'; at: number; items: Array<{ traceId: string; content: string }> }
  | { t: 'list'; at: number; total: number }
  /** An answer from the target (or a reviewer) in run `run`. `err`: the text stands for a target error. */
  | {
      t: 'answer';
      id: string;
      p?: string;
      a: string;
      at: number;
      /** The target's latency and, where it reported them, the prompt's and the answer's tokens. */
      ms?: number;
      /** Time to first token of a streamed answer. */
      ft?: number;
      tp?: number;
      tc?: number;
      err?: boolean;
      /** The fixed not-answered text submitted for a skipped trace (Submit as Not Answered). */
      na?: boolean;
      by?: 'target' | 'user';
      run?: string;
    }
  /** A reviewer's verdict on the trace's current answer (local only, never sent); no rating clears it. */
  | { t: 'verdict'; id: string; at: number; rating?: 'good' | 'bad'; note?: string }
  | { t: 'submitted'; id: string; at: number; code?: string }
  | { t: 'failed'; id: string; p?: string; reason: string; stage: 'target' | 'submit'; at: number }
  | { t: 'skipped'; id: string; reason: string; at: number };

// The shape every record must have to be replayed. A hand-edited or foreign line that does not fit (an answer
// of null, a record without a trace id) is counted as unreadable and never acted on: submitting it would send
// "null" or a trace "undefined" to the service.
const at = z.number();
const id = z.string().check(z.minLength(1));
const recordSchema = z.discriminatedUnion('t', [
  // A run record is only ever read, never acted on: its details are optional.
  z.object({
    t: z.literal('run'),
    at,
    run: z.optional(z.string()),
    fp: z.optional(z.string()),
    target: z.optional(z.string()),
    tool: z.optional(z.string()),
    mode: z.optional(z.enum(['fresh', 'reuse'])),
    origin: z.optional(z.string()),
    kind: z.optional(z.enum(['benchmark', 'robustness'])),
    evaluationId: z.optional(z.number()),
  }),
  z.object({ t: z.literal('end'), run: z.string(), at, outcome: z.string(), appeared: z.optional(z.array(z.string())), vanished: z.optional(z.array(z.string())) }),
  z.object({ t: z.literal('prompts'), at, items: z.array(z.object({ traceId: id, content: z.string() })) }),
  z.object({ t: z.literal('list'), at, total: z.number() }),
  z.object({
    t: z.literal('answer'),
    id,
    p: z.optional(z.string()),
    a: z.string(),
    at,
    ms: z.optional(z.number()),
    ft: z.optional(z.number()),
    tp: z.optional(z.number()),
    tc: z.optional(z.number()),
    err: z.optional(z.boolean()),
    na: z.optional(z.boolean()),
    by: z.optional(z.enum(['target', 'user'])),
    run: z.optional(z.string()),
  }),
  z.object({ t: z.literal('submitted'), id, at, code: z.optional(z.string()) }),
  z.object({ t: z.literal('verdict'), id, at, rating: z.optional(z.enum(['good', 'bad'])), note: z.optional(z.string()) }),
  z.object({ t: z.literal('failed'), id, p: z.optional(z.string()), reason: z.string(), stage: z.enum(['target', 'submit']), at }),
  z.object({ t: z.literal('skipped'), id, reason: z.string(), at }),
]);

export interface JournalKey {
  origin: string;
  kind: EvaluationKind;
  evaluationId: number;
}

export interface JournalReadResult {
  records: JournalRecord[];
  /** A last line cut short by a crash: dropped and reported, never fatal. */
  tornTail: boolean;
  /** Lines elsewhere that are not JSON or not a record of a known shape: skipped, never acted on. */
  corruptLines: number;
}

export interface Journal {
  readonly path: string | undefined;
  /** Resolves once the record is on disk (fsync'd). */
  append(record: JournalRecord): Promise<void>;
  /** Records appended and not yet on disk. */
  readonly backlog: number;
  /**
   * The first write that failed (a StorageError for a full or unwritable folder): every later append fails
   * with it too, so a run checks it before it reports success.
   */
  readonly failure: unknown;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const DSYNC: number | undefined = typeof constants.O_DSYNC === 'number' ? constants.O_DSYNC : undefined;

export function journalPath(stateDir: string, key: JournalKey): string {
  const readable = key.origin.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_');
  const hash = createHash('sha256').update(key.origin).digest('hex').slice(0, 8);
  return join(stateDir, `${readable}-${hash}`, `${key.kind}-${key.evaluationId}.jsonl`);
}

export async function readJournal(path: string): Promise<JournalReadResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], tornTail: false, corruptLines: 0 };
    throw error;
  }
  return parseJournal(text);
}

export function parseJournal(text: string): JournalReadResult {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const records: JournalRecord[] = [];
  let corruptLines = 0;
  for (const line of lines) {
    if (!line) continue;
    const record = parseLine(line);
    if (record) records.push(record);
    else corruptLines++;
  }
  // Text after the last newline is a record whose write was cut short.
  return { records, tornTail: last.length > 0, corruptLines };
}

function parseLine(line: string): JournalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  // The two records a run writes per trace and the prompt list, checked by hand (100k-trace journals replay in
  // a fraction of the time); zod, the schema of record, checks every other line.
  if (isPlainAnswer(value) || isPlainSubmitted(value) || isPlainPrompts(value)) return value;
  const parsed = recordSchema.safeParse(value);
  // The parsed copy drops unknown fields; records written by a newer version keep their known meaning.
  return parsed.success ? parsed.data : undefined;
}

type Loose = Record<string, unknown>;
const optional = (v: unknown, type: 'string' | 'number' | 'boolean') => v === undefined || typeof v === type;

function isPlainAnswer(v: unknown): v is Extract<JournalRecord, { t: 'answer' }> {
  const r = v as Loose;
  return (
    typeof v === 'object' && v !== null && r.t === 'answer' && typeof r.id === 'string' && r.id !== '' && typeof r.a === 'string' &&
    typeof r.at === 'number' && optional(r.p, 'string') && optional(r.ms, 'number') && optional(r.ft, 'number') && optional(r.tp, 'number') && optional(r.tc, 'number') && optional(r.err, 'boolean') && optional(r.na, 'boolean') &&
    optional(r.run, 'string') && (r.by === undefined || r.by === 'target' || r.by === 'user')
  );
}

function isPlainPrompts(v: unknown): v is Extract<JournalRecord, { t: 'prompts' }> {
  const r = v as Loose;
  if (typeof v !== 'object' || v === null || r.t !== 'prompts' || typeof r.at !== 'number' || !Array.isArray(r.items)) return false;
  for (const item of r.items as Loose[]) {
    if (typeof item !== 'object' || item === null || typeof item.traceId !== 'string' || item.traceId === '' || typeof item.content !== 'string') return false;
  }
  return true;
}

function isPlainSubmitted(v: unknown): v is Extract<JournalRecord, { t: 'submitted' }> {
  const r = v as Loose;
  return typeof v === 'object' && v !== null && r.t === 'submitted' && typeof r.id === 'string' && r.id !== '' && typeof r.at === 'number' && optional(r.code, 'string');
}

export interface OpenJournalOptions {
  /** Most records per fsync. */
  maxBatch?: number;
  /** The file operations (Node's; tests put a fault-injecting layer here). */
  fs?: JournalFs;
}

/**
 * Opens a journal for appending, after cutting a torn tail. Group commit: a flush starts as soon as the
 * previous one ends, so records arriving meanwhile share one write + fsync (at most maxBatch of them); a
 * record waits at most one fsync plus a millisecond, well inside the 200 ms the design allows. Also takes a lock file so two runs never write the same journal.
 */
export async function openJournal(
  path: string,
  options: OpenJournalOptions = {},
): Promise<{ journal: Journal; replay: JournalReadResult }> {
  const maxBatch = options.maxBatch ?? 512;
  const fs = options.fs ?? NODE_FS;
  let handle: JournalFileHandle;
  let replay: JournalReadResult;
  let locked = false;
  try {
    // Owner-only: the journal holds prompts and answers, which can be confidential.
    await fs.mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
    await acquireLock(fs, `${path}.lock`);
    locked = true;
    replay = await readJournal(path);
    // Appending after a torn line would glue the next record onto it: cut it first.
    if (replay.tornTail) await cutTornTail(fs, path);
    // With O_DSYNC a write returns once its bytes are on disk: one thread-pool job per batch instead of a write
    // and an fdatasync, each a round trip through a busy event loop (journal cost on a 20k run: 30 % → 12 %).
    // Where the platform has no O_DSYNC (Windows), each write is followed by an fdatasync as before.
    handle = await fs.open(path, DSYNC === undefined ? 'a' : constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | DSYNC, 0o600);
  } catch (error) {
    if (locked) releaseLock(fs, `${path}.lock`);
    throw asStorageError(error, path);
  }
  let queue: Array<{ line: string; resolve: () => void; reject: (e: unknown) => void }> = [];
  let writing = 0;
  let flushing: Promise<void> | undefined;
  let timer: NodeJS.Immediate | undefined;
  let failure: Error | undefined;

  async function flushLoop(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      writing = batch.length;
      try {
        if (failure) throw failure;
        await handle.write(batch.map((b) => b.line).join(''));
        if (DSYNC === undefined) await handle.datasync();
        for (const b of batch) b.resolve();
      } catch (error) {
        failure ??= asStorageError(error, path);
        for (const b of batch) b.reject(failure);
      }
      writing = 0;
    }
  }

  function kick(): void {
    if (timer) {
      clearImmediate(timer);
      timer = undefined;
    }
    if (!flushing) {
      flushing = flushLoop().finally(() => {
        flushing = undefined;
        if (queue.length > 0) kick();
      });
    }
  }

  const journal: Journal = {
    path,
    append(record) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ line: `${JSON.stringify(record)}\n`, resolve, reject });
        // Records of the same turn of the event loop share a flush; a busy flusher picks them up when it ends.
        if (queue.length >= maxBatch) kick();
        else timer ??= setImmediate(kick);
      });
    },
    get backlog() {
      return queue.length + writing;
    },
    get failure() {
      return failure;
    },
    async flush() {
      kick();
      while (flushing) await flushing;
    },
    async close() {
      kick();
      while (flushing) await flushing;
      // Closing and unlocking free space rather than take it: they go ahead on a full disk too.
      await handle.close().catch(() => undefined);
      releaseLock(fs, `${path}.lock`);
    },
  };
  return { journal, replay };
}

/** A journal that keeps nothing: for benchmarking the journal's own cost. */
export function nullJournal(): Journal {
  return { path: undefined, backlog: 0, failure: undefined, append: () => Promise.resolve(), flush: () => Promise.resolve(), close: () => Promise.resolve() };
}

async function cutTornTail(fs: JournalFs, path: string): Promise<void> {
  const text = await fs.readFile(path);
  await fs.truncate(path, text.lastIndexOf(0x0a) + 1);
}

function releaseLock(fs: JournalFs, lockPath: string): void {
  try {
    fs.rmSync(lockPath, { force: true });
  } catch {
    // A lock left behind names a dead pid: the next run takes it over.
  }
  heldLocks.delete(lockPath);
}

// Locks this process holds: a second writer in the same process (an editor window running and
// submitting at once) must be refused as surely as one in another process.
const heldLocks = new Set<string>();

async function acquireLock(fs: JournalFs, lockPath: string): Promise<void> {
  if (heldLocks.has(lockPath)) {
    throw new JournalLockedError('This evaluation is already running in this process; wait for it to finish or cancel it.');
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      writeNewFile(fs, lockPath, String(process.pid));
      heldLocks.add(lockPath);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await lockHolder(lockPath);
    if (holder === undefined) continue; // released meanwhile: create it again
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new JournalLockedError(`Another Eval Runner process (pid ${holder}) is running this evaluation; wait for it to finish or stop it.`);
    }
    // The holder died (a crash or SIGKILL): the lock is stale. Taking it over must be atomic, or two runs
    // started together would both delete it and both go on.
    if (await takeOverStaleLock(fs, lockPath, holder)) {
      heldLocks.add(lockPath);
      return;
    }
    // Another process is taking over: it will hold the lock (and the check above refuses) in a moment.
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
  }
  throw new JournalLockedError('Could not lock the journal; try again.');
}

/**
 * Takes over a lock whose holder is dead. Takeovers are serialised by a second lock file created exclusively;
 * inside it, the lock is replaced by a rename (so it never disappears, and a plain exclusive create elsewhere
 * keeps failing) only if it still names the dead holder seen before. Then ownership is read back.
 */
async function takeOverStaleLock(fs: JournalFs, lockPath: string, staleHolder: number): Promise<boolean> {
  const mutex = `${lockPath}.takeover`;
  try {
    writeNewFile(fs, mutex, String(process.pid));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A takeover mutex left by a process that died inside its few milliseconds: clear it for the next try.
    // (Two processes clearing the same dead mutex at once could both get in; that needs a crash inside the
    // takeover itself to begin with.)
    const owner = await lockHolder(mutex);
    if (owner !== undefined && (owner === 0 || !isAlive(owner))) fs.rmSync(mutex, { force: true });
    return false;
  }
  try {
    if ((await lockHolder(lockPath)) !== staleHolder) return false;
    fs.renameSync(writeAside(fs, lockPath, String(process.pid)), lockPath);
    return (await lockHolder(lockPath)) === process.pid;
  } finally {
    fs.rmSync(mutex, { force: true });
  }
}

/**
 * Creates a file with its whole text at once: written aside, then hard-linked into place, which fails with
 * EEXIST when the name is taken. A reader never sees the file empty, so an empty lock is never "a holder
 * mid-write" that another process could mistake for a dead one.
 */
function writeNewFile(fs: JournalFs, path: string, text: string): void {
  const aside = writeAside(fs, path, text);
  try {
    fs.linkSync(aside, path);
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

function writeAside(fs: JournalFs, path: string, text: string): string {
  const aside = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const fd = fs.openSync(aside, 'w', 0o600);
  try {
    fs.writeSync(fd, text);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(aside, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  return aside;
}

/** The pid a lock file names; 0 when it holds no pid (hand-edited), undefined when there is no such file. */
async function lockHolder(path: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class JournalLockedError extends Error {
  override name = 'JournalLockedError';
}
