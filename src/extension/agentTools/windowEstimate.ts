// What a run the agents' tools start from this window would send and cost: estimate_run's answer, and the figures the
// confirmation of start_run and rerun_traces gives. The one estimate of the tools (src/tools/runEstimate.ts, as the MCP
// server's and `run --estimate`'s), with this window's token, target plan, settings and prices. Part of
// dist/agentToolCalls.js: the price list and the tokenizer load when an estimate is first made.
import * as vscode from 'vscode';
import { EvaluationSession, readPriceTable, targetPrice } from '../../core';
import type { RerunSubset, RunMode, SessionKey } from '../../core';
import { estimateRunOf } from '../../tools/runEstimate';
import type { RunEstimate } from '../../tools/runEstimate';
import { ToolError } from '../../tools/toolTable';
import type { Ctx } from '../ctx';
import type { EvaluationRef } from '../evaluations/registry';
import { startParams } from '../runs/startParams';

// A confirmation waits this long for its estimate at most (a slow or unreachable service), then says why it has none.
export const CONFIRM_ESTIMATE_MS = 5_000;

/** What the estimate is of: a run in a mode, or a rerun of some traces. */
export interface EstimateAsk {
  mode?: RunMode;
  subset?: RerunSubset;
}

/** The estimates going on, by journal: a run started from this window waits until the one before it let go of the lock. */
const going = new Map<string, Promise<unknown>>();

/**
 * The estimate of a run of the evaluation from this window. `ask`: a token or a model key not stored yet is asked for
 * (estimate_run); a confirmation asks for nothing and says what is missing. The signal ends the service's listing.
 */
export async function windowEstimate(ctx: Ctx, key: SessionKey, what: EstimateAsk, options: { ask: boolean; signal?: AbortSignal }): Promise<RunEstimate> {
  const ref = ctx.current(windowRef(ctx, key));
  const token = options.ask ? await ctx.tokenFor(ref) : await storedToken(ctx, ref);
  if (token === undefined) throw new ToolError(`No token for ${ref.origin}: set it with Eval Runner: Set Token, then ask again.`);
  const plan = await ctx.targetPlan();
  if (!plan) throw new ToolError("The target's settings or secrets are not complete: run it once from the Evaluations view, then ask again.");
  const session = new EvaluationSession(key, ctx.settings.stateDir);
  const { only: _only, reuseFetchedPrompts: _reuse, subset: _subset, ...run } = startParams(ctx, ref, session, plan, token, { mode: what.mode ?? 'continue' }).run;
  const estimate = estimateRunOf(session, {
    ...run,
    client: ctx.clientWith(ref, token),
    identity: plan.identity,
    ...(what.subset ? { subset: what.subset } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    spec: plan.spec,
    price: targetPrice(plan.spec, { perModel: readPriceTable(ctx.settings.prices) }),
    priceHint: 'set its prices in evalRunner.prices',
  });
  const done = estimate.catch(() => undefined).finally(() => going.get(session.journalFile) === done && going.delete(session.journalFile));
  going.set(session.journalFile, done);
  return estimate;
}

/** Waits (a few seconds at most) for an estimate of this journal to let go of its lock: a run started now would trip over it. */
export async function estimateSettled(journalFile: string): Promise<void> {
  const pending = going.get(journalFile);
  if (pending) await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, CONFIRM_ESTIMATE_MS))]);
}

/**
 * The estimate for a confirmation, within CONFIRM_ESTIMATE_MS and the chat's cancellation: the estimate, or why there
 * is none (in words). A late estimate is stopped, so that it lets go of the journal before the run would start.
 */
export async function confirmEstimate(ctx: Ctx, key: SessionKey, what: EstimateAsk, cancel: vscode.CancellationToken): Promise<RunEstimate | { why: string }> {
  if (cancel.isCancellationRequested) return { why: vscode.l10n.t('cancelled') };
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let cancelled: vscode.Disposable | undefined;
  const late = new Promise<{ why: string }>((resolve) => {
    timer = setTimeout(() => resolve({ why: vscode.l10n.t('none came within {0} s (the service is slow or unreachable)', CONFIRM_ESTIMATE_MS / 1000) }), CONFIRM_ESTIMATE_MS);
    cancelled = cancel.onCancellationRequested(() => resolve({ why: vscode.l10n.t('cancelled') }));
  });
  try {
    return await Promise.race([windowEstimate(ctx, key, what, { ask: false, signal: stop.signal }).catch((error: unknown) => ({ why: whyNot(error) })), late]);
  } finally {
    clearTimeout(timer);
    cancelled?.dispose();
    stop.abort();
  }
}

function whyNot(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // The tools' words end with the agent's next step; a confirmation gives the reason alone.
  return message.replace(/^No estimate: /, '').replace(/(\. get_run_status tells where the evaluation stands)?\.$/, '');
}

/** The window's evaluation for a journal's key: only those the window lists (its settings and the sandbox). */
export function windowRef(ctx: Ctx, key: SessionKey): EvaluationRef {
  const ref = ctx.registry.refs.find((r) => r.key.origin === key.origin && r.kind === key.kind && r.evaluationId === key.evaluationId);
  if (!ref) throw new ToolError(`This window does not list ${key.kind} evaluation ${key.evaluationId} at ${key.origin}: add it with Eval Runner: Add Evaluation, then ask again.`);
  return ref;
}

/** The token stored for the evaluation's service (the sandbox's own), without asking: a confirmation asks nothing. */
async function storedToken(ctx: Ctx, ref: EvaluationRef): Promise<string | undefined> {
  if (ref.origin === 'unset' || ref.origin === 'invalid') return undefined;
  return ref.source === 'sandbox' ? ctx.sandbox.token() : ctx.tokens.get(ref.origin);
}
