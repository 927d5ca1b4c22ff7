import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../lifecycle';
import { LOCAL_STATES, skippedNote, STATE_LABELS } from '../../core';
import type { LocalTraceState, RunInfo, Verdict } from '../../core';
import type { Ctx } from '../ctx';
import { childrenOf, contextValue, evaluationDescription, groupLabel, nodeId, PAGE_SIZE, preview } from './treeModel';
import type { TreeNode } from './treeModel';
import { Beat } from '../progressPace';

type EvaluationNode = Extract<TreeNode, { kind: 'evaluation' }>;

const STATE_ICONS: Record<LocalTraceState, [string, string | undefined]> = {
  pending: ['circle-outline', undefined],
  running: ['sync~spin', 'charts.blue'],
  answered: ['comment', 'charts.yellow'],
  submitted: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  skipped: ['debug-step-over', 'disabledForeground'],
};

export function stateIcon(state: LocalTraceState): vscode.ThemeIcon {
  const [icon, color] = STATE_ICONS[state];
  return new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
}

export function verdictIcon(rating: Verdict): vscode.ThemeIcon {
  return rating === 'good'
    ? new vscode.ThemeIcon('thumbsup', new vscode.ThemeColor('testing.iconPassed'))
    : new vscode.ThemeIcon('thumbsdown', new vscode.ThemeColor('testing.iconFailed'));
}

/**
 * Adapts the tree model to VS Code. A change to one evaluation refreshes that evaluation's node only (its
 * description, and its groups when expanded), at most once a second: each refresh of the whole tree asks for the
 * roots again, and every request for children flashes the view's progress bar, which during a run at four a
 * second kept the workbench repainting.
 */
export class EvaluationsTree extends Disposable implements vscode.TreeDataProvider<TreeNode> {
  private readonly emitter = this._register(new vscode.EventEmitter<TreeNode | undefined>());
  readonly onDidChangeTreeData = this.emitter.event;
  visibleStates = new Set<LocalTraceState>(LOCAL_STATES);
  /** A session's change refreshes its node on the beat of the run's progress, once a second (progressPace.ts). */
  private readonly beat = new Beat(() => this.fireChanged());
  /** The evaluations' nodes as last given to VS Code: a refresh names the same object. */
  private roots = new Map<string, EvaluationNode>();
  /** The evaluations changed since the last refresh; undefined: the whole tree. */
  private changed: Set<string> | undefined = new Set();
  /** The evaluations whose node is expanded: they show traces (see watchView). */
  private readonly expanded = new Set<string>();

  constructor(private readonly ctx: Ctx) {
    super();
    this._register(ctx.registry.onDidChangeList(() => this.refreshAll()));
    this._register(
      ctx.registry.onDidChangeSession((ref) => {
        this.changed?.add(ref.id);
        this.beat.changed();
      }),
    );
    this._register(toDisposable(() => this.beat.cancel()));
  }

  /** Refreshes the whole tree now (the list of evaluations, or the states shown, changed). */
  refreshAll(): void {
    this.changed = undefined;
    this.beat.now();
  }

  /** Refreshes what changed since the last refresh: those evaluations' nodes, or the whole tree. */
  private fireChanged(): void {
    const changed = this.changed;
    this.changed = new Set();
    if (!changed) return this.emitter.fire(undefined);
    for (const id of changed) {
      const node = this.roots.get(id);
      if (node) this.emitter.fire(node);
    }
  }

  /**
   * Follows which evaluations the view shows expanded (VS Code asks an expanded node for its children, also when it
   * restores one): while one is, and the view is visible, a run of it followed in another process is read from its
   * journal for the groups' counts and the traces.
   */
  watchView(view: vscode.TreeView<TreeNode>): void {
    const expanded = (node: TreeNode, is: boolean) => node.kind === 'evaluation' && (is ? this.expanded.add(node.ref.id) : this.expanded.delete(node.ref.id));
    this._register(view.onDidExpandElement((e) => expanded(e.element, true)));
    this._register(view.onDidCollapseElement((e) => expanded(e.element, false)));
    this._register(this.ctx.registry.showsRows((refId) => view.visible && this.expanded.has(refId)));
  }

  getChildren(node?: TreeNode): TreeNode[] {
    if (!node) return this.rootNodes();
    if (node.kind === 'evaluation') this.expanded.add(node.ref.id);
    return childrenOf(node, this.ctx.registry.session(node.ref), this.visibleStates);
  }

  private rootNodes(): EvaluationNode[] {
    const roots = new Map<string, EvaluationNode>();
    for (const ref of this.ctx.registry.refs) {
      const known = this.roots.get(ref.id);
      roots.set(ref.id, known?.ref === ref ? known : { kind: 'evaluation', ref });
    }
    this.roots = roots;
    return [...roots.values()];
  }

  getParent(): undefined {
    return undefined;
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const session = this.ctx.registry.session(node.ref);
    let item: vscode.TreeItem;
    switch (node.kind) {
      case 'evaluation': {
        item = new vscode.TreeItem(node.ref.label, vscode.TreeItemCollapsibleState.Collapsed);
        item.description = evaluationDescription(session, this.ctx.settings.reviewBeforeSubmit);
        item.iconPath = new vscode.ThemeIcon(node.ref.kind === 'benchmark' ? 'beaker' : 'shield');
        item.tooltip = `${node.ref.label}\nService: ${node.ref.baseUrl || '(base URL not set)'}\nKind: ${node.ref.kind} · id ${node.ref.evaluationId}\n${runsText(session.runs)}`;
        break;
      }
      case 'group':
        item = new vscode.TreeItem(groupLabel(node.state, node.count), vscode.TreeItemCollapsibleState.Collapsed);
        item.iconPath = stateIcon(node.state);
        if (node.state === 'skipped') {
          item.description = vscode.l10n.t('the service cannot complete the evaluation while these are unanswered');
          item.tooltip = skippedNote(node.count);
        }
        break;
      case 'page':
        item = new vscode.TreeItem(
          `${STATE_LABELS[node.state]} ${node.page * PAGE_SIZE + 1}–${node.page * PAGE_SIZE + node.count}`,
          vscode.TreeItemCollapsibleState.Collapsed,
        );
        break;
      case 'trace': {
        const t = node.trace;
        item = new vscode.TreeItem(t.traceId, vscode.TreeItemCollapsibleState.None);
        item.description = preview(t.prompt, 60);
        // Traces sit under their state's group, so a judged trace shows its verdict instead of the state again.
        item.iconPath = t.rating ? verdictIcon(t.rating) : stateIcon(t.state);
        const verdict = t.rating ? `\nRated ${t.rating}${t.note ? `: ${preview(t.note, 200)}` : ''}` : t.note ? `\nNote: ${preview(t.note, 200)}` : '';
        // Plain text, never Markdown: prompts are adversarial by design.
        item.tooltip = `${STATE_LABELS[t.state]}${t.error ? ` — ${t.error}` : ''}${verdict}\n\n${preview(t.prompt, 400)}`;
        item.command = { command: 'evalRunner.openTrace', title: 'Open Trace', arguments: [node] };
        item.accessibilityInformation = { label: `${t.traceId}, ${STATE_LABELS[t.state]}${t.rating ? `, rated ${t.rating}` : ''}` };
        break;
      }
    }
    item.id = nodeId(node);
    item.contextValue = contextValue(node, session);
    return item;
  }
}

/** The evaluation's runs for its tooltip, newest first (plain text: targets are the user's own words). */
export function runsText(runs: readonly RunInfo[], max = 5): string {
  if (runs.length === 0) return 'Runs: none yet';
  const lines = runs
    .slice(-max)
    .reverse()
    .map((r) => {
      const mode = r.mode === 'reuse' ? ', mixed' : r.mode === 'fresh' ? ', fresh' : '';
      return `  ${new Date(r.startedAt).toLocaleString()} · ${r.target}${mode} · ${r.answered} answered, ${r.submitted} submitted, ${r.failed} failed (${r.runId})`;
    });
  return [`Runs (${runs.length}):`, ...lines, ...(runs.length > max ? [`  …and ${runs.length - max} older`] : [])].join('\n');
}
