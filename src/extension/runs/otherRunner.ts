import * as vscode from 'vscode';
import type { Ctx } from '../ctx';

/**
 * A run of this evaluation goes on in a runner this window cannot speak to (another Eval Runner version, as after an
 * update): said, with what to do, rather than skipped without a word.
 */
export function tellOtherRunner(ctx: Ctx, label: string, pid: number): string {
  const text = vscode.l10n.t('A run of {0} is in progress in a runner of another Eval Runner version (pid {1}): wait for it to end, or stop it.', label, pid);
  ctx.log.warn(text);
  void vscode.window.showWarningMessage(text);
  return text;
}

/**
 * The pid of the runner of another version that following a run met (its hello spoke another version: the runner's
 * client threw RunnerVersionError); undefined for any other failure. Known by its name: the runner's client is a
 * bundle of its own (dist/runnerClient.js), with its own copy of the class.
 */
export function otherRunnerPid(error: unknown): number | undefined {
  const e = error as { name?: unknown; pid?: unknown } | null;
  return error instanceof Error && e?.name === 'RunnerVersionError' && typeof e.pid === 'number' ? e.pid : undefined;
}
