import { createTarget } from '../../src/core';
import type { Target } from '../../src/core';
import type { TestHandles } from '../../src/extension/main';

/**
 * The target a Run in this window would call: the window's plan (its secrets gathered, asked for where missing), built
 * from what the plan sends a runner, as the runner builds it. undefined: the user cancelled a question.
 */
export async function plannedTarget(api: TestHandles): Promise<Target | undefined> {
  const plan = await api.ctx.targetPlan();
  return plan && createTarget(plan.spec, plan.secrets, { ...plan.options, connections: 1, proxy: null });
}
