import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { DebugTargetContext } from './targets/debugTrace';
import { SettingsSecrets } from './settings/settingsSecrets';
import { Ctx, extensionVersion } from './ctx';
import { RunDetailsPanels } from './runDetails/runDetailsPanel';
import { ComparePanels } from './compare/comparePanel';
import { REVIEW_SCHEME, ReviewCodeLens, ReviewContext, ReviewFileSystem } from './review/review';
import { RunController } from './runs/runs';
import { EvaluationsTree } from './evaluations/tree';
import { registerAgentTools } from './agentTools/agentTools';

/** Handles for the integration tests; returned only in test mode (exports are readable by any extension). */
export interface TestHandles {
  ctx: Ctx;
  tree: EvaluationsTree;
  compare: ComparePanels;
  panels: RunDetailsPanels;
  runs: RunController;
  /** Disposes everything and activates again on the same storage: a window reload, in-process. */
  restart(): TestHandles;
}

let features: vscode.Disposable | undefined;

/** Builds one context, registers every feature as a disposable, and reports its own failure. */
export function activate(context: vscode.ExtensionContext): TestHandles | undefined {
  try {
    performance.mark('evalRunner:activateStart');
    const handles = start(context);
    performance.mark('evalRunner:activateEnd');
    context.subscriptions.push({ dispose: () => void features?.dispose() });
    return context.extensionMode === vscode.ExtensionMode.Test ? handles : undefined;
  } catch (error) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Eval Runner could not start: {0}', error instanceof Error ? error.message : String(error)));
    throw error;
  }
}

function start(context: vscode.ExtensionContext, handles?: TestHandles): TestHandles {
  const ctx = new Ctx(context);
  const tree = new EvaluationsTree(ctx);
  const runs = new RunController(ctx);
  const panels = new RunDetailsPanels(ctx);
  const review = new ReviewFileSystem(ctx);
  const compare = new ComparePanels(ctx);
  const lenses = new ReviewCodeLens(ctx);
  // Several traces may be selected: Approve and Submit sends those.
  const view = vscode.window.createTreeView('evalRunner.evaluations', { treeDataProvider: tree, showCollapseAll: true, canSelectMany: true });
  ctx.treeSelection = () => view.selection;
  tree.watchView(view);
  features = vscode.Disposable.from(
    ...registerCommands(ctx, { tree, runs, panels, compare }),
    ...registerAgentTools(ctx, runs),
    view,
    vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, review, { isCaseSensitive: true }),
    vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME, pattern: '**/answer.txt' }, lenses),
    lenses,
    new ReviewContext(ctx),
    new DebugTargetContext(ctx),
    new SettingsSecrets(ctx),
    review,
    compare,
    panels,
    runs,
    tree,
    ctx,
  );
  ctx.log.info(`Eval Runner ${extensionVersion(context.extension)} activated.`);
  // Runs that went on in their runner processes while no window was there (a reload, an update) are followed again.
  runs.reattach();
  // The same object across restarts, so a test holding the handles activate() returned sees the new context.
  const out = handles ?? ({} as TestHandles);
  out.ctx = ctx;
  out.tree = tree;
  out.compare = compare;
  out.panels = panels;
  out.runs = runs;
  out.restart = () => {
    features?.dispose();
    return start(context, out);
  };
  return out;
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions: the sandbox is closed, a run in this extension host is
  // cancelled; runs in runner processes go on (unless evalRunner.keepRunsAlive is off) and the next window attaches.
}
