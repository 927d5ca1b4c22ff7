// What every agent tool is, is given and shares: the one table (toolTable.ts) is read by the MCP server (src/cli/mcpCommand.ts)
// and the editor's language-model tools alike; what differs between those hosts is in the ToolContext.
import * as z from 'zod/mini';
import { EVALUATION_KINDS } from '../api/evaluationKinds';
import type { EvaluationKind } from '../api/evaluationKinds';
import { EvaluationSession, safeText, SANDBOX_ORIGIN } from '../core';
import type { Estimate, EvaluationStatus, RerunSubset, RunMode, SessionKey } from '../core';
import { liveRunner } from '../protocol/runnerFiles';
import type { RunnerFile } from '../protocol/runnerFiles';
import type { RunnerState } from '../protocol/runnerProtocol';

/** A result: its text for the agent to read, and the same as data (MCP's structuredContent). */
export interface ToolResult {
  text: string;
  structured: Record<string, unknown>;
  /** The same answer with a shorter page (its nextOffset set), for an answer over the budget (resultGuard.ts). */
  smaller?: () => ToolResult;
}

/** A mistake the agent can mend (a wrong id, no run going on, a host without a target): its words name the next step. */
export class ToolError extends Error {
  override name = 'ToolError';
}

/** What a run the tools start is asked to do. */
export interface StartRequest {
  mode: RunMode;
  /** Rerun these traces as a new run (rerun_traces). */
  subset?: RerunSubset;
  /** Traces handled at once; the host's default when absent. */
  concurrency?: number;
}

/** An estimate (runEstimate.ts), and why it has no cost when it has none (no price for the model, a target that reports no tokens). */
export type RunEstimate = Estimate & { noCost: string | null };

/** Starting and estimating runs: the host's target, token and defaults (its config and flags), never the agent's. */
export interface RunStarter {
  /** What the target is, in words (its description: never a secret). */
  readonly target: string;
  /** What a run would call and cost (runEstimate.ts); nothing is called or submitted. */
  estimate(key: SessionKey, subset?: RerunSubset): Promise<RunEstimate>;
  /** Starts the run in a process of its own (it outlives the caller) and answers at once. */
  start(key: SessionKey, request: StartRequest): Promise<{ pid: number; state: RunnerState }>;
}

/** What differs between the hosts of the tools. */
export interface ToolContext {
  /** The state folder: every journal the tools read or write is under it. */
  stateDir: string;
  /** The service's origin (its base URL's), when the host was given one. */
  origin: string | undefined;
  /** The evaluation a tool acts on when its input names none. */
  defaults: { kind?: EvaluationKind; evaluationId?: number };
  /**
   * The service of the evaluation of this kind and id that the host lists, when it lists several services (a window:
   * its settings' and the sandbox's); undefined: `origin`.
   */
  originFor?: (kind: EvaluationKind, evaluationId: number) => string | undefined;
  /** Absent: the host cannot start runs, and `why` says what to add. */
  runs: RunStarter | { why: string };
  /** Every secret the host holds (the token, the target's key, header and query values): no answer carries one. */
  secrets?: () => Promise<readonly string[]>;
  /**
   * The secrets cleared from a whole text (callTool sets it): a tool cutting a text into pages clears it first, so a
   * secret split by a cut is not told in two halves.
   */
  redact?: (text: string) => string;
}

export type ToolHints = { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };

/** One tool of the table: everything a host needs to offer it, and the one implementation. */
export interface AgentTool<S extends z.ZodMiniType = z.ZodMiniType> {
  name: string;
  title: string;
  /** What it returns, when to use it and when not. */
  description: string;
  /** A strict object: a field the tool does not take (a target, a path) is a mistake, said as one. */
  input: S;
  hints: ToolHints;
  run(input: z.output<S>, context: ToolContext): Promise<ToolResult>;
}

/** A tool, typed by its input (the table holds them as AgentTool). */
export function tool<S extends z.ZodMiniType>(t: AgentTool<S>): AgentTool {
  return t;
}

/** An integer input within bounds. */
export function int(min: number, max: number, words: string) {
  return z.int().check(z.minimum(min), z.maximum(max), z.describe(words));
}

/** A text input of 1 to `max` characters. */
export function text(max: number, words: string) {
  return z.string().check(z.minLength(1), z.maxLength(max), z.describe(words));
}

/** Any input, described. */
export function about<T extends z.ZodMiniType>(schema: T, words: string): T {
  return schema.check(z.describe(words));
}

// Bounds on what an agent may ask for: no input makes the tools read or return without limit.
export const MAX_PAGE = 200;
export const MAX_TEXT = 20_000;
export const DEFAULT_TEXT = 4_000;
const MAX_EVALUATION_ID = 1_000_000_000_000;

/** Which evaluation: the host's default, or the one named (an origin only for reading an evaluation listed). */
export const EVALUATION_INPUT = {
  evaluationId: z.optional(int(0, MAX_EVALUATION_ID, "The evaluation's id (default: the one the server was started with).")),
  kind: z.optional(about(z.enum(EVALUATION_KINDS), 'benchmark or robustness (default: the one the server was started with).')),
};

export const ORIGIN_INPUT = {
  origin: z.optional(text(300, "The service's origin, as list_evaluations gives it (default: the server's service).")),
};

/** The evaluation the input names, or the defaults; `origin`: one read from list_evaluations, else the host's for it. */
export function keyOf(input: { evaluationId?: number | undefined; kind?: EvaluationKind | undefined; origin?: string | undefined }, context: ToolContext): SessionKey {
  const evaluationId = input.evaluationId ?? context.defaults.evaluationId;
  const kind = input.kind ?? context.defaults.kind;
  if (evaluationId === undefined || kind === undefined) {
    throw new ToolError('Name the evaluation: give evaluationId and kind (list_evaluations shows those in the state folder), or start the server with --evaluation and --kind.');
  }
  const origin = input.origin !== undefined ? originOf(input.origin) : (context.originFor?.(kind, evaluationId) ?? context.origin);
  if (origin === undefined) throw new ToolError('No service is set: give origin (from list_evaluations), or start the server with --base-url or --config.');
  return { origin, kind, evaluationId };
}

function originOf(text: string): string {
  if (text === SANDBOX_ORIGIN) return text;
  try {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  } catch {
    // said below
  }
  throw new ToolError(`origin must be a service's origin such as https://evals.example.com, as list_evaluations gives it (got "${safeText(text.slice(0, 100))}").`);
}

/** The longest service-given id a tool returns: the bound of its traceId input, so any id shown can be asked for. */
export const MAX_ID = 500;

/** A trace id from the service as a tool returns it: inert, at most MAX_ID characters, `traceIdCut` when it was longer. */
export function shownId(id: string): { traceId: string; traceIdCut?: number } {
  const { text, length } = capped(id, 0, MAX_ID);
  return { traceId: text!, ...(length > MAX_ID ? { traceIdCut: length } : {}) };
}

/** An untrusted text (an id, prompt, answer, error, note) in a tool's words: JSON-quoted, so it cannot add lines of its own. */
export function quoted(value: string | null | undefined, none = '(none)'): string {
  return value === null || value === undefined ? none : JSON.stringify(value);
}

/** A shown id in a tool's words: quoted, and said to be cut when it was. */
export function idText(row: { traceId: string; traceIdCut?: number }): string {
  return `${JSON.stringify(row.traceId)}${row.traceIdCut !== undefined ? ` (id cut from ${row.traceIdCut} characters)` : ''}`;
}

/** A text from the service or a target, made inert and cut to `max` characters from `offset`; `next`: where to read on. */
export function capped(value: string | undefined, offset = 0, max = DEFAULT_TEXT, redact?: (text: string) => string): { text: string | null; length: number; next: number | null } {
  if (value === undefined) return { text: null, length: 0, next: null };
  if (redact) value = redact(value);
  const end = Math.min(value.length, offset + max);
  return { text: safeText(value.slice(offset, end)), length: value.length, next: end < value.length ? end : null };
}

/** The host's run starter, or a tool error saying what to add to the server's configuration. */
export function runsOf(context: ToolContext): RunStarter {
  if ('why' in context.runs) throw new ToolError(context.runs.why);
  return context.runs;
}

/** A result whose text is the data's summary line(s); the data as structuredContent. */
export function result(words: string, structured: Record<string, unknown>): ToolResult {
  return { text: safeText(words), structured: JSON.parse(safeJsonOf(structured)) as Record<string, unknown> };
}

/** A page's result that can be made smaller (its first half, and so on) when it is over the answers' budget. */
export function pagedResult<T>(items: readonly T[], build: (page: readonly T[]) => ToolResult): ToolResult {
  const whole = build(items);
  return items.length > 1 ? { ...whole, smaller: () => pagedResult(items.slice(0, Math.ceil(items.length / 2)), build) } : whole;
}

/** Structured data with the controls JSON leaves raw written as escapes (as the CLI's --json). */
function safeJsonOf(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? safeText(v) : v));
}

export const PAGE = {
  offset: z._default(int(0, 10_000_000, 'How many to pass over (the last page gave nextOffset).'), 0),
  limit: z._default(int(1, MAX_PAGE, `How many at most (1–${MAX_PAGE}).`), 50),
};

/** The evaluation's session, read: its journal under the state folder, and a run going on (lock or runner). */
export async function readSession(key: SessionKey, context: ToolContext): Promise<{ session: EvaluationSession; status: EvaluationStatus; running: boolean }> {
  const session = new EvaluationSession(key, context.stateDir);
  const status = await session.status();
  return { session, status, running: runGoingOn(session, status) };
}

/** A run of the session's evaluation is going on: a process holds its journal, or a runner has a run to start or end. */
export function runGoingOn(session: EvaluationSession, status: EvaluationStatus): boolean {
  return status.running || runnerBusy(liveRunner(session.journalFile), status);
}

/**
 * A live runner counts as a run going on until the journal records the end of a run it started: after its run it
 * lingers a few seconds (a window reloading then still reads how it ended) without the lock, and is done already.
 * Before its run's record it is starting, and counts.
 */
function runnerBusy(runner: RunnerFile | undefined, status: EvaluationStatus): boolean {
  // Its own file says when its run ended (older runners' files do not: the journal tells then).
  if (!runner || runner.endedAt !== undefined) return false;
  const last = status.runs[status.runs.length - 1];
  return !(last?.endedAt !== undefined && last.startedAt >= runner.startedAt);
}

export function noJournal(key: SessionKey): ToolError {
  return new ToolError(`Nothing is journaled for ${key.kind} evaluation ${key.evaluationId} at ${key.origin} in this state folder: check the id with list_evaluations, or start a run with start_run.`);
}

