// The agents' tools in this window (issue 39): the one tool table (src/tools) with a ToolContext built from the
// window, its settings and secret storage. A file of its own (dist/agentToolCalls.js), loaded on the first call, so
// the table and its schemas are not read at activation. A run starts as the MCP server starts one (a detached runner,
// src/protocol/runnerStart.ts), with this window's target plan, secrets and token; the window then follows it.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { RERUN_SUBSETS, safeText, usdText } from '../../core';
import type { RerunSubset } from '../../core';
import { EVALUATION_KINDS } from '../../api/evaluationKinds';
import { startDetachedRun } from '../../protocol/runnerStart';
import { AGENT_TOOLS, callTool, ToolError } from '../../tools/toolTable';
import type { AgentTool, RunStarter, StartRequest, ToolContext } from '../../tools/toolTable';
import type { Ctx } from '../ctx';
import type { RunController } from '../runs/runs';
import { startParams } from '../runs/startParams';
import type { RunEstimate } from '../../tools/runEstimate';
import { heldByWindow } from './heldByWindow';
import { confirmEstimate, estimateSettled, windowEstimate, windowRef } from './windowEstimate';

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
 * What the confirmation of an action says it will do (a read asks nothing: undefined). A run or a rerun says how many
 * traces it would call and their estimated cost (windowEstimate.ts, within a few seconds and the chat's cancellation),
 * or, when no estimate can be made, the traces the journal knows and why there is no estimate.
 */
export async function confirmationOf(ctx: Ctx, runs: RunController, name: string, input: unknown, cancel: vscode.CancellationToken): Promise<{ title: string; message: string } | undefined> {
  const found = agentTool(name);
  if (!found || found.hints.readOnlyHint) return undefined;
  const fields = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const context = windowContext(ctx, runs);
  const evaluationId = typeof fields.evaluationId === 'number' ? fields.evaluationId : context.defaults.evaluationId;
  // The input is the model's: only known words reach the confirmation (it is Markdown).
  const kind = EVALUATION_KINDS.find((k) => k === fields.kind) ?? context.defaults.kind;
  const which = evaluationId !== undefined && kind !== undefined ? vscode.l10n.t('{0} evaluation {1}', kind, evaluationId) : vscode.l10n.t('the evaluation');
  const ref = evaluationId !== undefined ? ctx.registry.refs.find((r) => r.evaluationId === evaluationId && r.kind === kind) : undefined;
  const target = ctx.settings.target.type;
  const mode = (['fresh', 'reuse'] as const).find((m) => m === fields.mode) ?? 'continue';
  const subset = subsetOf(fields);
  const costs = (): Promise<RunEstimate | { why: string }> => {
    if ('why' in context.runs) return Promise.resolve({ why: context.runs.why });
    if (!ref) return Promise.resolve({ why: vscode.l10n.t('this window does not list the evaluation') });
    if (found.name === 'rerun_traces' && !subset) return Promise.resolve({ why: vscode.l10n.t('no traces are named') });
    return confirmEstimate(ctx, ref.key, subset && found.name === 'rerun_traces' ? { subset } : { mode }, cancel);
  };
  switch (found.name) {
    case 'start_run': {
      const counts = ref ? ctx.registry.session(ref).store.counts : undefined;
      const known = counts ? vscode.l10n.t('{0} traces journaled, {1} submitted', ctx.registry.session(ref!).store.total, counts.submitted) : vscode.l10n.t('its traces as the service lists them');
      return { title: found.title, message: vscode.l10n.t('Run {0} with the {1} target (mode {2}): {3}. The target is called for each trace left, at its cost.', which, target, mode, costWords(await costs(), known)) };
    }
    case 'rerun_traces': {
      const failed = ref ? ctx.registry.session(ref).store.counts.failed : undefined;
      const chosen = Array.isArray(fields.traceIds) ? vscode.l10n.t('{0} chosen traces', fields.traceIds.length) : fields.which === 'failed' && failed !== undefined ? vscode.l10n.t('{0} failed traces', failed) : vscode.l10n.t('the {0} traces', RERUN_SUBSETS.find((w) => w === fields.which) ?? '');
      return { title: found.title, message: vscode.l10n.t('Rerun {0} of {1} with the {2} target and resubmit their answers ({3}): the target is called for each, at its cost.', chosen, which, target, costWords(await costs(), chosen)) };
    }
    default:
      return { title: found.title, message: vscode.l10n.t('{0}: {1}.', found.title, which) };
  }
}

/** traces × estimated cost, in words; without an estimate, what the journal knows and why there is none. */
export function costWords(e: RunEstimate | { why: string }, known: string): string {
  if ('why' in e) return vscode.l10n.t('{0}; no estimate: {1}', known, safeText(e.why));
  const traces = e.traces.toLocaleString('en-US');
  if (!e.usd) return vscode.l10n.t('{0} traces to call; no cost: {1}', traces, safeText(e.noCost ?? ''));
  const range = e.usd.low === e.usd.high ? usdText(e.usd.low) : `${usdText(e.usd.low)}–${usdText(e.usd.high)}`;
  return vscode.l10n.t('{0} traces to call × an estimated {1} in all ({2} input tokens, {3}–{4} output tokens)', traces, range, e.inputTokens.toLocaleString('en-US'), e.outputTokens.low.toLocaleString('en-US'), e.outputTokens.high.toLocaleString('en-US'));
}

/** rerun_traces' subset, as the tool reads it (undefined: not one it takes; the tool says so when called). */
function subsetOf(fields: Record<string, unknown>): RerunSubset | undefined {
  if (Array.isArray(fields.traceIds) && fields.traceIds.every((id) => typeof id === 'string')) return { ids: fields.traceIds };
  return RERUN_SUBSETS.find((w) => w === fields.which);
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
    // An evaluation listed at one service only (the sandbox's beside the settings' service) is acted on there.
    originFor: (kind, evaluationId) => {
      const same = listed.filter((r) => r.kind === kind && r.evaluationId === evaluationId);
      return (same.length === 1 ? same[0] : same.find((r) => r.source === 'configured'))?.key.origin;
    },
    defaults: only ? { kind: only.kind, evaluationId: only.evaluationId } : {},
    runs: ctx.settings.target.type === 'manual' ? { why: 'The manual target has no model to call: choose a target with Eval Runner: Select Target, then ask again.' } : windowRuns(ctx, runs),
    secrets: () => heldByWindow(ctx),
  };
}

/** Runs as this window would start them: its token, target plan and secrets, in a detached runner it then follows. */
function windowRuns(ctx: Ctx, runs: RunController): RunStarter {
  return {
    target: ctx.settings.target.type,
    estimate: (key, subset) => windowEstimate(ctx, key, subset ? { subset } : {}, { ask: true }),
    start: async (key, request) => {
      const ref = windowRef(ctx, key);
      const token = await ctx.tokenFor(ref);
      if (token === undefined) throw new ToolError(`No token for ${ref.origin}: set it with Eval Runner: Set Token, then ask again.`);
      const current = ctx.current(ref);
      const plan = await ctx.targetPlan();
      if (!plan) throw new ToolError("The target's settings or secrets are not complete: run it once from the Evaluations view, then ask again.");
      const session = ctx.registry.session(current);
      const params = startParams(ctx, current, session, plan, token, requestOf(request));
      if (request.concurrency) params.run.concurrency = request.concurrency;
      // A confirmation's estimate that ran late is stopped: its lock is let go before the runner takes it.
      await estimateSettled(session.journalFile);
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
