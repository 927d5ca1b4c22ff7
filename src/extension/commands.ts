// The one command table: every command id and the handler that runs it, grouped by area in their own files
// (evaluationCommands, runCommands, rerunTraces, accessCommands, reviewCommands, targetPicks, debugTrace).
import * as vscode from 'vscode';
import { clearModelKey, clearToken, setToken, startSandbox, stopSandbox } from './access/accessCommands';
import { addEvaluation, copyCliCommand, exportReport, exportResults, fetchPrompts, filterTraces, openProcessDetails, refresh, removeEvaluation, showProgress } from './evaluations/evaluationCommands';
import { cancelRun, compareRuns, runEvaluation, runTrace, skipTrace, submitResponse, submitSkipped } from './runs/runCommands';
import { debugTrace } from './targets/debugTrace';
import { rerunTraces } from './runs/rerunTraces';
import { pauseRun, resumeRun, setRunConcurrency } from './runs/steerCommands';
import { runActions } from './runs/runMenu';
import { selectTarget } from './targets/targetPicks';
import type { Ctx } from './ctx';
import type { Features } from './features';
import { errorText, showError, showLogs } from './log';
import { approveAndSubmit, copyTraceId, editNote, markVerdict, openTrace, stepTrace } from './review/reviewCommands';

type Handler = (ctx: Ctx, f: Features, ...args: unknown[]) => unknown;

/** Every command, keyed by the id package.json declares (a test checks the two sets are equal). */
export const COMMANDS = {
  'evalRunner.addEvaluation': addEvaluation,
  'evalRunner.removeEvaluation': removeEvaluation,
  'evalRunner.fetchPrompts': fetchPrompts,
  'evalRunner.runEvaluation': runEvaluation,
  'evalRunner.runTrace': runTrace,
  'evalRunner.submitResponse': submitResponse,
  // A shortcut for Rerun Traces… → Failed traces: one path, whichever way it is reached.
  'evalRunner.retryFailed': (ctx, f, arg) => rerunTraces(ctx, f, arg, 'failed'),
  'evalRunner.skipTrace': skipTrace,
  'evalRunner.cancelRun': cancelRun,
  'evalRunner.pauseRun': pauseRun,
  'evalRunner.resumeRun': resumeRun,
  'evalRunner.setRunConcurrency': setRunConcurrency,
  'evalRunner.runActions': runActions,
  'evalRunner.showProgress': showProgress,
  'evalRunner.openTrace': openTrace,
  'evalRunner.exportResults': exportResults,
  'evalRunner.exportReport': exportReport,
  'evalRunner.openProcessDetails': openProcessDetails,
  'evalRunner.setToken': setToken,
  'evalRunner.clearToken': clearToken,
  'evalRunner.selectTarget': selectTarget,
  'evalRunner.clearModelKey': clearModelKey,
  'evalRunner.startSandbox': startSandbox,
  'evalRunner.stopSandbox': stopSandbox,
  'evalRunner.filterTraces': filterTraces,
  'evalRunner.copyTraceId': copyTraceId,
  'evalRunner.markGood': (ctx, _f, arg, traceArg) => markVerdict(ctx, 'good', arg, traceArg),
  'evalRunner.markBad': (ctx, _f, arg, traceArg) => markVerdict(ctx, 'bad', arg, traceArg),
  'evalRunner.editNote': (ctx, _f, arg, traceArg) => editNote(ctx, arg, traceArg),
  'evalRunner.nextTrace': (ctx, _f, arg, traceArg) => stepTrace(ctx, 1, arg, traceArg),
  'evalRunner.previousTrace': (ctx, _f, arg, traceArg) => stepTrace(ctx, -1, arg, traceArg),
  'evalRunner.compareRuns': compareRuns,
  'evalRunner.copyCliCommand': copyCliCommand,
  'evalRunner.rerunTraces': rerunTraces,
  'evalRunner.submitSkipped': submitSkipped,
  'evalRunner.refresh': refresh,
  'evalRunner.approveAndSubmit': approveAndSubmit,
  'evalRunner.showLogs': showLogs,
  'evalRunner.debugTrace': debugTrace,
} satisfies Record<string, Handler>;

export type CommandId = keyof typeof COMMANDS;

export function registerCommands(ctx: Ctx, features: Features): vscode.Disposable[] {
  return Object.entries(COMMANDS).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await (handler as Handler)(ctx, features, ...args);
      } catch (error) {
        await showError(ctx.log, vscode.l10n.t('{0} failed: {1}', id.replace('evalRunner.', ''), errorText(error)));
        return undefined;
      }
    }),
  );
}
