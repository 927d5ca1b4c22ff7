// The tools that act: start a run or a rerun (in a process of its own, which outlives the agent's session), pause,
// resume or cancel a run going on, wherever it was started (the CLI, a window, another agent).
import * as z from 'zod/mini';
import { RERUN_SUBSETS, RUN_OPTIONS } from '../core';
import type { RerunSubset, SessionKey } from '../core';
import { cancelRun } from '../protocol/runnerStart';
import { steerRun } from '../protocol/steerClient';
import type { Steer } from '../protocol/steerClient';
import { about, EVALUATION_INPUT, int, keyOf, readSession, result, runsOf, text, tool, ToolError } from './toolKit';
import type { AgentTool, StartRequest, ToolContext, ToolResult } from './toolKit';

const { min, max } = RUN_OPTIONS.concurrency;
const CONCURRENCY = z.optional(int(min, max, `Traces handled at once (${min}–${max}; default: the server's).`));

/** Starts the run unless one is going on; answers at once with where it stands. */
async function started(key: SessionKey, request: StartRequest, context: ToolContext, what: string): Promise<ToolResult> {
  const runs = runsOf(context);
  const { running } = await readSession(key, context);
  if (running) throw new ToolError(`A run of ${key.kind} evaluation ${key.evaluationId} is going on already: follow it with get_run_status (resume_run if it is paused), or cancel_run it first.`);
  const { pid, state } = await runs.start(key, request);
  // A run that could not get going (an unknown evaluation, a refused token, a target refused) ended before its list.
  const ended = state.finished;
  if (ended && ended.outcome !== 'completed' && ended.outcome !== 'failedTraces' && ended.outcome !== 'cancelled') {
    throw new ToolError(`The run of ${key.kind} evaluation ${key.evaluationId} ended at once (${ended.outcome}): ${(ended.message ?? 'no reason was given').slice(0, 1000).replace(/\.$/, '')}. Fix that, then start_run again; list_evaluations shows the evaluations known here.`);
  }
  const text = `${what} ${key.kind} evaluation ${key.evaluationId} with ${runs.target}, in its own process (pid ${pid}): it goes on if this session ends. Follow it with get_run_status until done.`;
  return result(text, { evaluation: key, started: true, pid, target: runs.target, mode: request.mode, ...(request.subset ? { rerun: request.subset } : {}), progress: state.progress ?? null });
}

const startRunTool = tool({
  name: 'start_run',
  title: 'Start run',
  description:
    "Starts a run of an evaluation with the target, service and options the server was configured with (its --config file and flags; the agent cannot choose another target). Answers at once: the run goes on in a process of its own, survives this session, and shows in get_run_status, `eval-runner status` and the editor. mode continue (default) resumes and submits what is left; fresh answers every trace again and resubmits; reuse submits journaled answers as they are. Use estimate_run first on a paid model; not for rerunning chosen traces (rerun_traces).",
  input: z.strictObject({ ...EVALUATION_INPUT, mode: z._default(about(z.enum(['continue', 'fresh', 'reuse']), 'continue, fresh or reuse (see the description).'), 'continue'), concurrency: CONCURRENCY }),
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run: async (input, context) => started(keyOf(input, context), { mode: input.mode, ...(input.concurrency ? { concurrency: input.concurrency } : {}) }, context, 'Started a run of'),
});

const rerunTracesTool = tool({
  name: 'rerun_traces',
  title: 'Rerun traces',
  description:
    'Reruns some traces of an evaluation as a new run with the server\'s target, and resubmits their answers: the failed ones, those a reviewer marked bad or noted, or up to 1000 trace ids. Answers at once; the rerun goes on in its own process (follow it with get_run_status, then compare_runs). Use it after a fix, for the failures list_traces showed; not for the whole evaluation (start_run).',
  input: z.strictObject({
    ...EVALUATION_INPUT,
    which: z.optional(about(z.enum(RERUN_SUBSETS), 'failed, bad or noted traces.')),
    traceIds: z.optional(about(z.array(text(500, 'A trace id.')).check(z.minLength(1), z.maxLength(1000)), 'These trace ids, up to 1000 (instead of which).')),
    concurrency: CONCURRENCY,
  }),
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run: async (input, context) => {
    if ((input.which === undefined) === (input.traceIds === undefined)) throw new ToolError('Give which (failed, bad or noted) or traceIds (from list_traces), one of the two.');
    const key = keyOf(input, context);
    const subset: RerunSubset = input.traceIds ? { ids: input.traceIds } : input.which!;
    const { session } = await readSession(key, context);
    const count = typeof subset === 'string' && subset === 'failed' ? session.store.counts.failed : undefined;
    if (count === 0) throw new ToolError(`No trace of ${key.kind} evaluation ${key.evaluationId} failed: nothing to rerun. list_traces shows the traces by state.`);
    return started(key, { mode: 'reuse', subset, ...(input.concurrency ? { concurrency: input.concurrency } : {}) }, context, 'Started a rerun of');
  },
});

/** pause_run, resume_run: the steer, told. */
function steerTool(name: 'pause_run' | 'resume_run', steer: Steer, words: { title: string; did: string; description: string }): AgentTool {
  return tool({
    name,
    title: words.title,
    description: words.description,
    input: z.strictObject({ ...EVALUATION_INPUT }),
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async (input, context) => {
      const key = keyOf(input, context);
      const { session } = await readSession(key, context);
      const now = await steered(() => steerRun(session.journalFile, steer), key);
      return result(`${words.did} the run of ${key.kind} evaluation ${key.evaluationId}${now.concurrency !== undefined ? ` (concurrency ${now.concurrency})` : ''}.`, { evaluation: key, ...now });
    },
  });
}

async function steered<T>(act: () => Promise<T>, key: SessionKey): Promise<T> {
  try {
    return await act();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ToolError(`Could not reach the run of ${key.kind} evaluation ${key.evaluationId}: ${message}. get_run_status tells whether a run is going on.`);
  }
}

const cancelRunTool = tool({
  name: 'cancel_run',
  title: 'Cancel run',
  description:
    'Cancels the run of an evaluation going on, wherever it was started: it finishes the target calls in flight and saves (hard: true aborts them). What was answered stays journaled; start_run later goes on from there. Use it to stop a run for good; pause_run only holds it.',
  input: z.strictObject({ ...EVALUATION_INPUT, hard: z._default(about(z.boolean(), 'Abort the calls in flight rather than finish them.'), false) }),
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: async (input, context) => {
    const key = keyOf(input, context);
    const { session } = await readSession(key, context);
    await steered(() => cancelRun(session.journalFile, input.hard), key);
    return result(`Cancelled the run of ${key.kind} evaluation ${key.evaluationId}; it stops once ${input.hard ? 'its calls are aborted' : 'the calls in flight finish'}. get_run_status tells when it has.`, { evaluation: key, cancelled: true, hard: input.hard });
  },
});

export const ACTION_TOOLS: readonly AgentTool[] = [
  startRunTool,
  steerTool('pause_run', { action: 'pause' }, {
    title: 'Pause run',
    did: 'Paused',
    description: 'Pauses the run of an evaluation going on, wherever it was started: calls in flight finish, none starts until resume_run. Journaled. Use it to hold a run (a quota, a look at the failures); cancel_run stops it.',
  }),
  steerTool('resume_run', { action: 'resume' }, { title: 'Resume run', did: 'Resumed', description: 'Resumes a run that pause_run paused. Not for a run that ended or was cancelled (start_run goes on from where it stopped).' }),
  cancelRunTool,
  rerunTracesTool,
];
