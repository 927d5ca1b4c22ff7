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
