// The tools that read: the state folder's evaluations, a run's status, its traces, one trace, two runs compared, and
// what a run would cost. None writes anything; all but estimate_run read the journal alone (no network, no token).
import * as z from 'zod/mini';
import { estimateText, lastRunOf, listEvaluations, LOCAL_STATES, RERUN_SUBSETS } from '../core';
import type { TraceInfo } from '../core';
import { about, capped, DEFAULT_TEXT, EVALUATION_INPUT, idText, int, keyOf, MAX_TEXT, noJournal, ORIGIN_INPUT, PAGE, pagedResult, quoted, readSession, result, runsOf, shownId, text, tool, ToolError } from './toolKit';
import type { AgentTool } from './toolKit';
import { reachRun } from '../protocol/runnerConnection';
import { state } from '../protocol/runnerProtocol';
import { compareRunsTool } from './compareTool';

const READ = { readOnlyHint: true, openWorldHint: false } as const;

const listEvaluationsTool = tool({
  name: 'list_evaluations',
  title: 'List evaluations',
  description:
    'Lists every evaluation journaled in the state folder (the same listing as `eval-runner list`): its service origin, kind and id, traces, submitted and failed counts, its last run and whether a run is going on now. Reads local journals only (no network). Use it first, to find the evaluationId, kind and origin the other tools take; not for one evaluation\'s progress (get_run_status).',
  input: z.strictObject({ ...PAGE }),
  hints: READ,
  run: async ({ offset, limit }, context) => {
    const all = await listEvaluations([context.stateDir]);
    const page = all.slice(offset, offset + limit).map(({ journal: _journal, stateDir: _dir, ...e }) => e);
    const lines = page.map((e) => `${e.kind} ${e.evaluationId} at ${e.origin}: ${e.traces} trace(s), ${e.submitted} submitted, ${e.failed} failed${e.lastRun ? `; last run ${e.lastRun.runId} ${e.lastRun.outcome}` : '; no run yet'}${e.running ? '; a run is going on now' : ''}`);
    const text = all.length ? lines.join('\n') : 'No evaluation is journaled in the state folder yet: start one with start_run.';
    return result(text, { total: all.length, evaluations: page, nextOffset: offset + limit < all.length ? offset + limit : null });
  },
});

const getRunStatusTool = tool({
  name: 'get_run_status',
  title: 'Get run status',
  description:
    "Tells an evaluation's progress from its journal: traces by state (pending, answered, submitted, failed, skipped), whether a run is going on, and the last run's id and outcome. `done` is true once no run is going on; a run going on also says whether it is paused or waits (for a token, the service, a window). Use it to follow a run after start_run or rerun_traces (call it again every few seconds until done); not for the traces themselves (list_traces).",
  input: z.strictObject({ ...EVALUATION_INPUT, ...ORIGIN_INPUT }),
  hints: READ,
  run: async (input, context) => {
    const key = keyOf(input, context);
    const { session, status, running } = await readSession(key, context);
    if (!running && status.total === 0 && status.runs.length === 0) throw noJournal(key);
    const lastRun = lastRunOf(status);
    const c = status.counts;
    const now = running ? await runNow(session.journalFile) : undefined;
    const text = [
      `${key.kind} ${key.evaluationId} at ${key.origin}: ${running ? 'a run is going on' : 'no run is going on'}.`,
      now?.says ?? '',
      `${status.total} trace(s): ${c.submitted} submitted, ${c.answered} answered, ${c.failed} failed, ${c.skipped} skipped, ${c.pending + c.running} to do.`,
      lastRun ? `Last run ${lastRun.runId}: ${lastRun.outcome}.` : 'No run yet.',
      c.failed ? 'list_traces with state "failed" shows the failures; rerun_traces reruns them.' : '',
    ].filter(Boolean).join('\n');
    return result(text, { evaluation: key, running, done: !running, ...(now ? { paused: now.paused, waiting: now.waiting, concurrency: now.concurrency } : {}), total: status.total, counts: status.counts, runs: status.runs.length, lastRun, interrupted: status.interrupted });
  },
});

// The run is asked briefly: a read never waits long on a run that does not answer (the journal has the rest).
const STATE_TIMEOUT_MS = 2_000;

/**
 * What the run going on says of itself, asked over its socket as pause_run reaches it: paused, or waiting (for a
 * token, the service, a window), and its concurrency. Undefined when it cannot be asked (a run of another version).
 */
async function runNow(journalFile: string): Promise<{ paused: boolean; waiting: string | null; concurrency: number | null; says: string } | undefined> {
  const p = await reachRun(journalFile, (connection) => connection.sendRequest(state), STATE_TIMEOUT_MS).then((s) => s.progress, () => undefined);
  if (!p) return undefined;
  const waiting = p.hold ? (p.hold.kind === 'token' ? `the service refused the token (${p.hold.cause})` : `the service is unreachable (${p.hold.cause})`) : p.waitingFor === 'window' ? "a window to serve the chat model's calls" : (p.waitingReason ?? null);
  const says = [p.paused ? 'It is paused: resume_run resumes it, cancel_run stops it.' : '', waiting ? `It waits: ${waiting}.` : ''].filter(Boolean).join(' ');
  return { paused: p.paused === true, waiting, concurrency: p.targetConcurrency ?? null, says };
}

const listTracesTool = tool({
  name: 'list_traces',
  title: 'List traces',
  description:
    "Lists an evaluation's traces from its journal, a page at a time, optionally in one state (failed, submitted, ...): each trace's id, state, error (cut short), the reviewer's verdict and the run that answered it. Use it to find failures or traces to read; get_trace gives one trace's prompt and answer in full.",
  input: z.strictObject({ ...EVALUATION_INPUT, ...ORIGIN_INPUT, state: z.optional(about(z.enum(LOCAL_STATES), 'Only traces in this state.')), ...PAGE }),
  hints: READ,
  run: async (input, context) => {
    const key = keyOf(input, context);
    const { session, status } = await readSession(key, context);
    if (status.total === 0) throw noJournal(key);
    const store = session.store;
    const total = input.state ? store.counts[input.state] : store.total;
    const traces = input.state ? [...store.inState(input.state, input.offset, input.limit)] : [...store.traces.values()].slice(input.offset, input.offset + input.limit);
    const rows = traces.map((t) => traceRow(t));
    return pagedResult(rows, (page) => {
      const nextOffset = input.offset + page.length < total ? input.offset + page.length : null;
      const text = [`${total} trace(s)${input.state ? ` ${input.state}` : ''}; ${page.length} from ${input.offset}${nextOffset !== null ? ` (more: offset ${nextOffset})` : ''}.`, ...page.map((r) => `${idText(r)} ${r.state}${r.error ? `: ${quoted(r.error)}` : ''}${r.verdict ? ` [${r.verdict}]` : ''}`)].join('\n');
      return result(text, { evaluation: key, state: input.state ?? null, total, traces: page, nextOffset });
    });
  },
});

function traceRow(t: TraceInfo) {
  return { ...shownId(t.traceId), state: t.state, error: capped(t.error, 0, 300).text, verdict: t.rating ?? null, note: capped(t.note, 0, 300).text, answerRun: t.answerRun ?? null, latencyMs: t.latencyMs ?? null };
}

const getTraceTool = tool({
  name: 'get_trace',
  title: 'Get trace',
  description: `One trace from the journal: its prompt, its answer, its error, the reviewer's verdict and note. Long texts are cut at maxChars (default ${DEFAULT_TEXT}); read on by calling again with offset set to the nextOffset given. Use it after list_traces to see why a trace failed or what it answered.`,
  input: z.strictObject({
    ...EVALUATION_INPUT,
    ...ORIGIN_INPUT,
    traceId: text(500, 'The trace id (from list_traces).'),
    offset: z._default(int(0, 100_000_000, 'Where the prompt and answer texts start (0, then a nextOffset).'), 0),
    maxChars: z._default(int(1, MAX_TEXT, `Characters of each text at most (1–${MAX_TEXT}).`), DEFAULT_TEXT),
  }),
  hints: READ,
  run: async (input, context) => {
    const key = keyOf(input, context);
    const { session } = await readSession(key, context);
    const t = session.store.get(input.traceId);
    if (!t) throw new ToolError(`No trace "${input.traceId.slice(0, 100)}" in ${key.kind} evaluation ${key.evaluationId}: take an id from list_traces.`);
    const prompt = capped(t.prompt, input.offset, input.maxChars, context.redact);
    const answer = capped(t.answer, input.offset, input.maxChars, context.redact);
    const structured = { evaluation: key, ...traceRow(t), error: capped(t.error, 0, MAX_TEXT, context.redact).text, note: capped(t.note, 0, MAX_TEXT, context.redact).text, errorAnswer: t.errorAnswer, prompt, answer };
    const more = [prompt.next, answer.next].filter((n): n is number => n !== null);
    const text = [
      `Trace ${idText(structured)}: ${t.state}${t.rating ? `, marked ${t.rating}` : ''}.`,
      structured.error ? `Error: ${quoted(structured.error)}` : '',
      `Prompt (${prompt.length} chars): ${quoted(prompt.text)}`,
      `Answer (${answer.length} chars): ${quoted(answer.text)}`,
      more.length ? `Cut short: call again with offset ${Math.min(...more)} to read on.` : '',
    ].filter(Boolean).join('\n');
    return result(text, structured);
  },
});

const estimateRunTool = tool({
  name: 'estimate_run',
  title: 'Estimate run',
  description:
    "What a run (or a rerun of some traces) would send to the target and cost: traces, input and output tokens, USD where the model's price is known, and what the figures assume. Lists the evaluation's prompts from the service and journals them (as a run would), so it cannot run while a run holds the evaluation (get_run_status tells); calls no target and submits nothing. Use it before start_run or rerun_traces on a paid model.",
  input: z.strictObject({ ...EVALUATION_INPUT, rerun: z.optional(about(z.enum(RERUN_SUBSETS), 'Estimate a rerun of these traces (failed, bad, noted) instead of a run.')) }),
  hints: { readOnlyHint: true, openWorldHint: true },
  run: async (input, context) => {
    const key = keyOf(input, context);
    const estimate = await runsOf(context).estimate(key, input.rerun);
    return result(`Estimate for ${key.kind} ${key.evaluationId} (nothing was called or submitted):\n${estimateText(estimate, estimate.noCost ?? undefined)}`, { evaluation: key, ...estimate });
  },
});

export const READ_TOOLS: readonly AgentTool[] = [listEvaluationsTool, getRunStatusTool, estimateRunTool, listTracesTool, getTraceTool, compareRunsTool];
