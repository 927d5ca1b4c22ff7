// How `eval-runner mcp` starts and estimates runs for the agents' tools: with the target, service and options of its
// own flags and --config file (read and allowed once, at start, under the rules of "Every way in stays shut"), never
// the agent's. A run goes to a detached runner process, as an editor's does, so it outlives the agent's session.
import { join } from 'node:path';
import { proxyFromEnv } from '../api/proxy';
import { EvaluationSession, flagSecretVariables, hostRun, TOOL_VERSION } from '../core';
import type { Estimate, RerunSubset, RunOptions, RunPrice, SessionKey, TargetSpec, TraceInfo } from '../core';
import type { StartParams } from '../protocol/runnerProtocol';
import { startDetachedRun } from '../protocol/runnerStart';
import { ToolError } from '../tools/toolTable';
import type { RunStarter, StartRequest } from '../tools/toolTable';
import { clientFor } from './common';
import { estimateFor } from './costFlags';
import type { ServiceArgs } from './common';
import { targetFromPlan } from './targetOptions';
import type { TargetPlan } from './targetOptions';
import type { RequestEncoding } from '../api/evaluationKinds';

/** What the server read from its flags, once: everything a run needs but the evaluation and the agent's choices. */
export interface McpRunSetup {
  args: Pick<ServiceArgs, 'baseUrl' | 'maxListMegabytes'>;
  token: string;
  stateDir: string;
  encoding: RequestEncoding;
  options: RunOptions;
  plan: TargetPlan;
  flags: Record<string, string | boolean | Array<string | boolean> | undefined>;
  price: RunPrice | undefined;
}

const TOOL = `eval-runner-mcp ${TOOL_VERSION}`;

/** The runs the tools start: in dist/runner.js beside this bundle, detached. */
export function mcpRunStarter(setup: McpRunSetup, runnerScript = join(__dirname, 'runner.js')): RunStarter {
  const { spec, secrets, authHint } = setup.plan.parts;
  const cwd = setup.plan.kind.localProcess ? process.cwd() : undefined;
  const identity = targetFromPlan(setup.plan, setup.flags, setup.options.concurrency).identity;
  return {
    target: identity.description,
    start: async (key, request) => {
      const session = new EvaluationSession(key, setup.stateDir);
      return startDetachedRun(runnerScript, session.journalFile, startParams(setup, key, request, { spec, secrets, authHint, cwd, identity }), runnerEnv(setup));
    },
    estimate: (key, subset) => estimateOf(setup, key, subset),
  };
}

/**
 * The runner's environment: this one less the token and every variable the run reads a secret from (as `run` withholds
 * them from the target's own processes); those cross the runner's socket in the start message only.
 */
function runnerEnv(setup: McpRunSetup): NodeJS.ProcessEnv {
  const withheld = new Set(['EVAL_RUNNER_TOKEN', ...flagSecretVariables(setup.flags), ...setup.plan.uses.map((u) => u.variable)]);
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !withheld.has(name)));
}

function startParams(setup: McpRunSetup, key: SessionKey, request: StartRequest, target: { spec: TargetSpec; secrets: StartParams['target']['secrets']; authHint: string | undefined; cwd: string | undefined; identity: StartParams['identity'] }): StartParams {
  const proxy = proxyFromEnv();
  return {
    key,
    baseUrl: setup.args.baseUrl,
    stateDir: setup.stateDir,
    label: `${key.kind} ${key.evaluationId}`,
    token: setup.token,
    encoding: setup.encoding,
    proxy: proxy ?? null,
    userAgent: 'eval-runner-mcp',
    ...(setup.args.maxListMegabytes ? { maxListBytes: setup.args.maxListMegabytes * 1024 * 1024 } : {}),
    target: { spec: target.spec, secrets: target.secrets, ...(target.cwd ? { cwd: target.cwd } : {}), ...(target.authHint ? { authHint: target.authHint } : {}) },
    identity: target.identity,
    run: {
      ...setup.options,
      targetTimeoutMs: setup.plan.timeoutMs,
      ...(request.concurrency ? { concurrency: request.concurrency } : {}),
      tool: TOOL,
      mode: request.mode,
      ...(request.subset ? { subset: request.subset } : {}),
    },
  };
}

/** run --estimate in this process: the prompts listed, nothing called or submitted. */
async function estimateOf(setup: McpRunSetup, key: SessionKey, subset: RerunSubset | undefined): Promise<Estimate> {
  const session = new EvaluationSession(key, setup.stateDir);
  const client = clientFor({ ...setup.args, kind: key.kind, evaluationId: key.evaluationId }, setup.token, setup.encoding, setup.options.concurrency);
  let traces: readonly TraceInfo[] | undefined;
  const ran = await hostRun(
    session,
    {
      client,
      identity: targetFromPlan(setup.plan, setup.flags, setup.options.concurrency).identity,
      tool: TOOL,
      ...setup.options,
      targetTimeoutMs: setup.plan.timeoutMs,
      targets: () => targetFromPlan(setup.plan, setup.flags, setup.options.concurrency),
      estimateOnly: (toCall) => (traces = toCall),
      ...(setup.price ? { price: setup.price } : {}),
      ...(subset ? { subset } : {}),
    },
    (hosted) => Promise.resolve(hosted),
  );
  if (!traces) {
    const why = ran.result && 'message' in ran.result && ran.result.message ? ran.result.message : 'the run did not get as far as its prompts';
    throw new ToolError(`No estimate: ${why.replace(/[\s.]+$/, '')}. get_run_status tells where the evaluation stands.`);
  }
  return estimateFor(traces, setup.plan.parts.spec, setup.price, session.store.runs);
}
