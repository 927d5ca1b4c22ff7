// The agents' tools in this window (issue 39): the one tool table (src/tools) with a ToolContext built from the
// window, its settings and secret storage. A file of its own (dist/agentToolCalls.js), loaded on the first call, so
// the table and its schemas are not read at activation. A run starts as the MCP server starts one (a detached runner,
// src/protocol/runnerStart.ts), with this window's target plan, secrets and token; the window then follows it.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { RERUN_SUBSETS } from '../../core';
import type { SessionKey } from '../../core';
import { EVALUATION_KINDS } from '../../api/evaluationKinds';
import { startDetachedRun } from '../../protocol/runnerStart';
import { AGENT_TOOLS, callTool, ToolError } from '../../tools/toolTable';
import type { AgentTool, RunStarter, StartRequest, ToolContext } from '../../tools/toolTable';
import type { Ctx } from '../ctx';
import type { EvaluationRef } from '../evaluations/registry';
import type { RunController } from '../runs/runs';
import { startParams } from '../runs/startParams';
import { heldByWindow } from './heldByWindow';

/** What the chat shows: the tool's answer in words (never a secret: the table's results carry none). */
export interface AgentToolAnswer {
  text: string;
  isError: boolean;
}

/** The tool named `evalRunner_<tool>`, or undefined. */
export function agentTool(name: string): AgentTool | undefined {
  return AGENT_TOOLS.find((t) => `evalRunner_${t.name}` === name);
}

/** Runs one tool as the agent asked: checked by its schema, and any mistake said in words. */
export async function invokeAgentTool(ctx: Ctx, runs: RunController, name: string, input: unknown): Promise<AgentToolAnswer> {
  const found = agentTool(name);
  if (!found) return { text: `${name} is not one of Eval Runner's tools.`, isError: true };
  const answer = await callTool(found, input, windowContext(ctx, runs));
  return { text: answer.text, isError: answer.isError === true };
}

/**
 * What the confirmation of an action says it will do (a read asks nothing: undefined). A run or a rerun says how
 * many traces are left or chosen, as the journal knows them; the editor has no estimate without listing the prompts.
 */
export function confirmationOf(ctx: Ctx, runs: RunController, name: string, input: unknown): { title: string; message: string } | undefined {
  const found = agentTool(name);
  if (!found || found.hints.readOnlyHint) return undefined;
  const fields = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const context = windowContext(ctx, runs);
  const evaluationId = typeof fields.evaluationId === 'number' ? fields.evaluationId : context.defaults.evaluationId;
  // The input is the model's: only known words reach the confirmation (it is Markdown).
  const kind = EVALUATION_KINDS.find((k) => k === fields.kind) ?? context.defaults.kind;
  const which = evaluationId !== undefined && kind !== undefined ? vscode.l10n.t('{0} evaluation {1}', kind, evaluationId) : vscode.l10n.t('the evaluation');
  const ref = evaluationId !== undefined ? ctx.registry.refs.find((r) => r.evaluationId === evaluationId && r.kind === kind) : undefined;
  const counts = ref ? ctx.registry.session(ref).store.counts : undefined;
  const target = ctx.settings.target.type;
  switch (found.name) {
    case 'start_run': {
      const left = counts ? vscode.l10n.t('{0} traces journaled, {1} submitted', ctx.registry.session(ref!).store.total, counts.submitted) : vscode.l10n.t('its traces as the service lists them');
      return { title: found.title, message: vscode.l10n.t('Run {0} with the {1} target (mode {2}): {3}. The target is called for each trace left, at its cost.', which, target, ['fresh', 'reuse'].find((m) => m === fields.mode) ?? 'continue', left) };
    }
    case 'rerun_traces': {
      const chosen = Array.isArray(fields.traceIds) ? vscode.l10n.t('{0} chosen traces', fields.traceIds.length) : fields.which === 'failed' && counts ? vscode.l10n.t('{0} failed traces', counts.failed) : vscode.l10n.t('the {0} traces', RERUN_SUBSETS.find((w) => w === fields.which) ?? '');
      return { title: found.title, message: vscode.l10n.t('Rerun {0} of {1} with the {2} target and resubmit their answers: the target is called for each, at its cost.', chosen, which, target) };
    }
    default:
      return { title: found.title, message: vscode.l10n.t('{0}: {1}.', found.title, which) };
  }
}

/** The tools' context in this window: its state folder, its service, the one evaluation it has as the default. */
function windowContext(ctx: Ctx, runs: RunController): ToolContext {
  // The journal's origin (the sandbox's is the sandbox, whatever its port); the settings' evaluations before the sandbox's.
  const listed = ctx.registry.refs.filter((r) => r.origin !== 'unset' && r.origin !== 'invalid');
  const configured = listed.filter((r) => r.source === 'configured');
  const mine = configured.length ? configured : listed;
  const only = mine.length === 1 ? mine[0]! : undefined;
  return {
    stateDir: ctx.settings.stateDir,
    origin: mine[0]?.key.origin,
    defaults: only ? { kind: only.kind, evaluationId: only.evaluationId } : {},
    runs: ctx.settings.target.type === 'manual' ? { why: 'The manual target has no model to call: choose a target with Eval Runner: Select Target, then ask again.' } : windowRuns(ctx, runs),
    secrets: () => heldByWindow(ctx),
  };
}

/** Runs as this window would start them: its token, target plan and secrets, in a detached runner it then follows. */
function windowRuns(ctx: Ctx, runs: RunController): RunStarter {
  return {
    target: ctx.settings.target.type,
    estimate: () => Promise.reject(new ToolError('estimate_run is not offered in the editor: a run whose estimate passes evalRunner.estimateThresholdUsd asks before it spends; `eval-runner run --estimate` prints one.')),
    start: async (key, request) => {
      const ref = refOf(ctx, key);
      const token = await ctx.tokenFor(ref);
      if (token === undefined) throw new ToolError(`No token for ${ref.origin}: set it with Eval Runner: Set Token, then ask again.`);
      const current = ctx.current(ref);
      const plan = await ctx.targetPlan();
      if (!plan) throw new ToolError("The target's settings or secrets are not complete: run it once from the Evaluations view, then ask again.");
      const session = ctx.registry.session(current);
      const params = startParams(ctx, current, session, plan, token, requestOf(request));
      if (request.concurrency) params.run.concurrency = request.concurrency;
      const script = join(ctx.extension.extensionPath, 'dist', 'runner.js');
      const started = await startDetachedRun(script, session.journalFile, params, { ...process.env, ELECTRON_RUN_AS_NODE: '1' });
      runs.followStarted(current);
      return started;
    },
  };
}

function requestOf(request: StartRequest) {
  return { mode: request.mode, ...(request.subset ? { subset: request.subset } : {}) };
}

/** The window's evaluation for a journal's key: only those the window lists (its settings and the sandbox). */
function refOf(ctx: Ctx, key: SessionKey): EvaluationRef {
  const ref = ctx.registry.refs.find((r) => r.key.origin === key.origin && r.kind === key.kind && r.evaluationId === key.evaluationId);
  if (!ref) throw new ToolError(`This window does not list ${key.kind} evaluation ${key.evaluationId} at ${key.origin}: add it with Eval Runner: Add Evaluation, then ask again.`);
  return ref;
}
