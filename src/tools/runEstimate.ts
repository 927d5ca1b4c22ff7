// What a run would send and cost, estimated once for every host of the tools (the MCP server's estimate_run, the
// editor's estimate_run and its confirmations) as `run --estimate` does: the session lists (and journals) the prompts
// and plans the run under the journal's lock, then stops before any call; estimateTarget prices what it would call.
import { estimateTarget, hostRun } from '../core';
import type { EvaluationSession, HostRunRequest, RunPrice, TargetSpec, TraceInfo } from '../core';
import { runGoingOn, ToolError } from './toolKit';
import type { RunEstimate } from './toolKit';

export type { RunEstimate } from './toolKit';

/** The run to estimate: the host's run request but the target (none is made or called), with the target's spec and price. */
export interface EstimateRequest extends Omit<HostRunRequest, 'targets' | 'estimateOnly' | 'confirmCalls' | 'listen'> {
  spec: TargetSpec;
  price: RunPrice | undefined;
  /** Where the host's user sets a price (the server's flags, the editor's setting), said when there is none. */
  priceHint: string;
}

/**
 * The estimate of the run the request describes; its client is closed after. A run going on holds the journal: said,
 * not waited for. The signal ends the listing early (a service too slow for a confirmation); the lock is let go
 * before this settles.
 */
export async function estimateRunOf(session: EvaluationSession, request: EstimateRequest): Promise<RunEstimate> {
  const { spec, price, priceHint, ...run } = request;
  const key = session.key;
  if (runGoingOn(session, await session.status())) {
    // hostRun closes the client it ran with; this one never ran.
    await run.client.close().catch(() => undefined);
    throw new ToolError(`A run of ${key.kind} evaluation ${key.evaluationId} is going on and holds its journal: no estimate until it ends (get_run_status follows it).`);
  }
  let traces: readonly TraceInfo[] | undefined;
  const ran = await hostRun(session, { ...run, targets: () => ({ target: notCalled(run.identity.description) }), estimateOnly: (toCall) => (traces = toCall) }, (hosted) => Promise.resolve(hosted));
  if (!traces) {
    const why = ran.result && 'message' in ran.result && ran.result.message ? ran.result.message : ran.result ? 'the run did not get as far as its prompts' : 'no trace of the evaluation is among those asked for';
    throw new ToolError(`No estimate: ${why.replace(/\.$/, '')}. get_run_status tells where the evaluation stands.`);
  }
  const estimate = estimateTarget(traces.map((t) => t.prompt ?? ''), spec, price, session.store.runs);
  return { ...estimate, noCost: estimate.usd ? null : noCostWhy(spec, priceHint) };
}

/** Why a run of this target has no cost estimate, and what to do about it. */
function noCostWhy(spec: TargetSpec, priceHint: string): string {
  if (spec.type === 'openai') return `no price is known for the model "${spec.model}": ${priceHint}`;
  if (spec.type === 'http') return `the http target has a price only with a usage path and prices of its own: ${priceHint}`;
  return `the ${spec.type} target reports no token usage to price`;
}

/** The target of an estimate: described, never called (an estimate ends before any call, by the engine's rule). */
function notCalled(description: string) {
  return { description, send: () => Promise.reject(new Error('An estimate calls no target.')) };
}
