import * as vscode from 'vscode';
import type { TestHandles } from '../../src/extension/main';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import type { Sandbox } from '../../src/sandbox/server';
import { freshSandbox } from './freshSandbox';
import { until } from './until';

const config = () => vscode.workspace.getConfiguration('evalRunner');
const G = vscode.ConfigurationTarget.Global;

/** A fresh sandbox's benchmark evaluation 1, listed in the sidebar under `label`: the set-up most editor tests share. */
export interface ListedEvaluation {
  api: TestHandles;
  sandbox: Sandbox;
  refOf(): EvaluationRef;
  /** Clears the settings it wrote (and `alsoSet`'s) and closes the sandbox. */
  close(): Promise<void>;
}

/** Lists the evaluation (settings `baseUrl` and `evaluations`, and `alsoSet`'s) and waits until the sidebar has it. */
export async function listedEvaluation(label: string, alsoSet: Record<string, unknown> = {}): Promise<ListedEvaluation> {
  const api = (await vscode.extensions.getExtension('eval-runner.eval-runner')!.activate()) as TestHandles;
  const sandbox = await freshSandbox({ port: 0, evaluationSeconds: 0 });
  const settings = { baseUrl: sandbox.baseUrl, evaluations: [{ evaluationId: 1, kind: 'benchmark', label }], ...alsoSet };
  for (const [key, value] of Object.entries(settings)) await config().update(key, value, G);
  await until('the evaluation is listed', () => api.ctx.registry.refs.some((r) => r.label === label));
  return {
    api,
    sandbox,
    refOf: () => api.ctx.registry.refs.find((r) => r.label === label)!,
    close: async () => {
      for (const key of Object.keys(settings)) await config().update(key, undefined, G);
      await sandbox.close();
    },
  };
}
