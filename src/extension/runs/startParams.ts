// What a window sends a runner to start a run as the window would: its settings, the target's plan, the token.
import { MIB } from '../../api/client';
import { maxErrorRateSetting, runOptions } from '../../core';
import type { EvaluationSession, RerunSubset, RunMode } from '../../core';
import type { StartParams } from '../../protocol/runnerProtocol';
import { readProxy } from '../settings/settings';
import { extensionVersion } from '../ctx';
import type { Ctx, TargetPlan } from '../ctx';
import type { EvaluationRef } from '../evaluations/registry';

export interface RunRequest {
  /** Only these traces (Run Trace, Retry Failed). */
  only?: ReadonlySet<string>;
  /** How to treat answers another target gave; asked in a modal when the journal has some and this is unset. */
  mode?: RunMode;
  /**
   * Rerun Traces: the runner picks this subset's traces from the journal and reruns them as a new run, without the
   * "another target" question (the core's rule, session.rerun: the mode asked here is not used).
   */
  subset?: RerunSubset;
}

/** What a runner needs to run as this window would: the settings, the target's plan and secrets, the token. */
export function startParams(ctx: Ctx, ref: EvaluationRef, session: EvaluationSession, plan: TargetPlan, token: string, request: RunRequest & { mode: RunMode }): StartParams {
  const settings = ctx.settings;
  return {
    key: session.key,
    baseUrl: ref.baseUrl,
    stateDir: settings.stateDir,
    label: ref.label,
    token,
    encoding: settings.requestEncoding,
    proxy: readProxy(),
    userAgent: ctx.userAgent,
    maxListBytes: settings.maxListMegabytes * MIB,
    target: { spec: plan.spec, secrets: plan.secrets, ...(plan.options.cwd ? { cwd: plan.options.cwd } : {}), ...(plan.options.authHint ? { authHint: plan.options.authHint } : {}) },
    identity: plan.identity,
    run: {
      ...runSettings(ctx),
      mode: request.mode,
      ...(request.only ? { only: [...request.only], reuseFetchedPrompts: true } : {}),
      ...(request.subset ? { subset: request.subset } : {}),
    },
    // The runner prices the run and holds its budget (the price list is its, not the window's).
    cost: {
      prices: { ...settings.prices },
      ...(settings.budgetUsd !== undefined ? { budgetUsd: settings.budgetUsd } : {}),
      estimateThresholdUsd: settings.estimateThresholdUsd,
    },
  };
}

/** The run's settings: the core's defaults, as the CLI's (runOptions). */
function runSettings(ctx: Ctx) {
  const settings = ctx.settings;
  return {
    tool: `eval-runner-vscode ${extensionVersion(ctx.extension.extension)}`,
    ...runOptions({
      concurrency: settings.concurrency,
      onTargetError: settings.onTargetError,
      holdAnswers: settings.reviewBeforeSubmit,
      waitForGenerationSeconds: settings.waitForGenerationSeconds,
      servicePatienceSeconds: settings.servicePatience,
      ...(settings.maxRequestsPerMinute ? { maxRequestsPerMinute: settings.maxRequestsPerMinute } : {}),
      ...(settings.targetRetries !== undefined ? { targetRetries: settings.targetRetries } : {}),
      maxErrorRate: maxErrorRateSetting(settings.maxErrorRate),
    }),
  };
}
