// Pause Run, Resume Run and Set Run Concurrency…: steer a run this window follows, whoever started it (this window,
// another, or `eval-runner run` in a terminal), as `eval-runner pause` does: through the runner protocol.
import * as vscode from 'vscode';
import { MAX_STEERED_CONCURRENCY } from '../../core';
import type { Ctx } from '../ctx';
import type { Features } from '../features';
import type { EvaluationRef } from '../evaluations/registry';
import { pickEvaluation } from '../pick';
import type { Steer } from '../../protocol/steerClient';

export function pauseRun(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  return steer(ctx, arg, () => ({ action: 'pause' }));
}

export function resumeRun(ctx: Ctx, _f: Features, arg: unknown): Promise<void> {
  return steer(ctx, arg, () => ({ action: 'resume' }));
}

export function setRunConcurrency(ctx: Ctx, _f: Features, arg: unknown, value: unknown): Promise<void> {
  return steer(ctx, arg, async (ref) => {
    const given = typeof value === 'number' ? value : undefined;
    const concurrency = given ?? (await askConcurrency(ctx, ref));
    return concurrency === undefined ? undefined : { action: 'setConcurrency', concurrency };
  });
}

async function askConcurrency(ctx: Ctx, ref: EvaluationRef): Promise<number | undefined> {
  const now = ctx.registry.session(ref).lastProgress?.targetConcurrency;
  const text = await vscode.window.showInputBox({
    title: vscode.l10n.t('Concurrency of the run of {0}', ref.label),
    prompt: vscode.l10n.t('Target calls in flight at most, from now on (1 to {0})', MAX_STEERED_CONCURRENCY),
    ...(now !== undefined ? { value: String(now) } : {}),
    validateInput: (v) => (valid(v) === undefined ? vscode.l10n.t('A whole number from 1 to {0}.', MAX_STEERED_CONCURRENCY) : undefined),
  });
  return text === undefined ? undefined : valid(text);
}

function valid(text: string): number | undefined {
  const n = Number(text.trim());
  return /^\d+$/.test(text.trim()) && n >= 1 && n <= MAX_STEERED_CONCURRENCY ? n : undefined;
}

async function steer(ctx: Ctx, arg: unknown, steerOf: (ref: EvaluationRef) => Steer | undefined | Promise<Steer | undefined>): Promise<void> {
  const running = ctx.registry.refs.filter((r) => ctx.registry.session(r).isRunning);
  const ref = arg === undefined && running.length === 1 ? running[0] : await pickEvaluation(ctx, arg, running);
  if (!ref) {
    if (running.length === 0) void vscode.window.showInformationMessage(vscode.l10n.t('No evaluation is running.'));
    return;
  }
  const what = await steerOf(ref);
  if (!what) return;
  try {
    const result = await steerClient().steerRun(ctx.registry.journalFileOf(ref), what);
    const said =
      what.action === 'pause'
        ? vscode.l10n.t('{0}: paused. The calls in flight finish; no new one starts until you resume.', ref.label)
        : what.action === 'resume'
          ? vscode.l10n.t('{0}: resumed.', ref.label)
          : vscode.l10n.t('{0}: at most {1} target call(s) in flight from now on.', ref.label, result.concurrency ?? what.concurrency);
    ctx.log.info(said);
    void vscode.window.setStatusBarMessage(said, 5000);
  } catch (error) {
    void vscode.window.showErrorMessage(vscode.l10n.t('The run of {0} could not be steered: {1}', ref.label, error instanceof Error ? error.message : String(error)));
  }
}

/** The steering client lives in the runner client's bundle (dist/runnerClient.js) with its JSON-RPC library. */
function steerClient(): typeof import('./runnerClient') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./runnerClient.js') as typeof import('./runnerClient');
}
