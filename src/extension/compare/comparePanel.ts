import * as vscode from 'vscode';
import { costText, runCost } from '../../core';
import type { RunInfo } from '../../core';
import { compareMessageSchema, compareStateSchema } from '../../webview/messageSchemas';
import type { CompareHeader, CompareHostMessage, CompareMessage, CompareState, CompareViewMessage } from '../../webview/protocol';
import { CompareTable } from './compareTable';
import type { Ctx } from '../ctx';
import { PanelController, PanelHost } from '../panels/panelHost';
import type { EvaluationRef } from '../evaluations/registry';
import { MAX_WINDOW } from '../panels/rowView';
import { withClient } from '../withClient';

export const COMPARE_VIEW_TYPE = 'evalRunner.compare';
/** Read-only documents holding one run's answer, for VS Code's diff editor. */
export const RUN_ANSWER_SCHEME = 'evalrunner-run';

const keyOf = (state: { refId: string; runA: string; runB: string }) => `${state.refId}|${state.runA}|${state.runB}`;

/**
 * Compare Runs: a table of every trace two runs of one evaluation answered (only the differing ones by
 * default) with both answers and latencies, a diff editor per trace, and submitting one run's answer. Reads
 * the journal only: the service is called only to submit. The host holds the rows and filters them; the page gets
 * the rows it shows. Restored after a reload from the state its page saved (the evaluation, the two runs, the
 * traces it was narrowed to, the filters).
 */
export class ComparePanels extends PanelHost<CompareState, ComparePanel> implements vscode.TextDocumentContentProvider {
  constructor(ctx: Ctx) {
    super(ctx, {
      viewType: COMPARE_VIEW_TYPE,
      title: 'Compare Runs',
      tabTitle: (ref) => `Compare: ${ref.label}`,
      stateSchema: compareStateSchema,
      keyOf,
      create: (panel, ref, state) => new ComparePanel(ctx, panel, ref, state),
    });
    this._register(vscode.workspace.registerTextDocumentContentProvider(RUN_ANSWER_SCHEME, this));
  }

  /** `only`: show just these traces (after Rerun Traces, the ones that ran again). */
  async compare(ref: EvaluationRef, a: RunInfo, b: RunInfo, only?: ReadonlySet<string>): Promise<void> {
    if (!this.findRuns(ref.id, a.runId, b.runId)) await fullWidth();
    const panel = this.show(ref, { refId: ref.id, runA: a.runId, runB: b.runId, only: only ? [...only] : null });
    panel.only = only;
    await panel.load();
  }

  /** The panel showing these two runs (the tests drive it through this). */
  findRuns(refId: string, runA: string, runB: string): ComparePanel | undefined {
    return this.find(keyOf({ refId, runA, runB }));
  }

  /** evalrunner-run:/<run>/<trace>/answer.txt?ref=…&run=…&trace=… → that run's answer. */
  provideTextDocumentContent(uri: vscode.Uri): string {
    const q = new URLSearchParams(uri.query);
    for (const p of this.panels) {
      const text = p.answerOf(q.get('ref') ?? '', q.get('run') ?? '', q.get('trace') ?? '');
      if (text !== undefined) return text;
    }
    return '(This comparison is closed: open Compare Runs again.)';
  }
}

/** Our own editors: a trace's review documents and a run's answers (schemes evalrunner, evalrunner-run), our panels. */
function ours(tab: vscode.Tab): boolean {
  const input = tab.input;
  const mine = (uri: vscode.Uri) => uri.scheme.startsWith('evalrunner');
  if (input instanceof vscode.TabInputText) return mine(input.uri);
  if (input instanceof vscode.TabInputTextDiff) return mine(input.original) && mine(input.modified);
  return input instanceof vscode.TabInputWebview && input.viewType.includes('evalRunner.');
}

/**
 * Compare Runs wants the window's width (its Actions column is last): the groups a review left (its prompt and answer
 * side by side), holding only our editors, are joined into one first. A layout of the user's own is left as it is.
 */
async function fullWidth(): Promise<void> {
  const groups = vscode.window.tabGroups.all;
  if (groups.length > 1 && groups.every((g) => g.tabs.every(ours))) await vscode.commands.executeCommand('workbench.action.joinAllGroups');
}

export class ComparePanel extends PanelController<CompareMessage, CompareHostMessage> {
  private readonly table = new CompareTable();
  private loaded = false;
  private a: RunInfo | undefined;
  private b: RunInfo | undefined;
  private readonly runA: string;
  private readonly runB: string;
  /** The rows the page last asked for, and the trace whose place it follows. */
  private shown: { start: number; end: number; activeKey: string | null } | undefined;
  /** Only these traces are shown (Rerun Traces); undefined: every trace either run answered. */
  only: ReadonlySet<string> | undefined;
  /** The last window sent to the page (the tests read it). */
  lastView: CompareViewMessage | undefined;
  /** Which runs and their costs, as last sent (for the tests). */
  lastHeader: CompareHeader | undefined;

  constructor(ctx: Ctx, panel: vscode.WebviewPanel, ref: EvaluationRef, state: CompareState) {
    super(ctx, panel, ref, { title: 'Compare Runs', script: 'webview/compare.js', bodyClass: 'compare', schema: compareMessageSchema });
    this.runA = state.runA;
    this.runB = state.runB;
    this.only = state.only ? new Set(state.only) : undefined;
  }

  override async load(): Promise<void> {
    const rows = await this.session.compare(this.runA, this.runB);
    const verdicts = (side: 'a' | 'b', id: string) => this.session.store.verdictOf(side === 'a' ? this.runA : this.runB, id)?.rating;
    this.table.load(this.only ? rows.filter((r) => this.only!.has(r.traceId)) : rows, verdicts);
    this.a = this.session.store.runById(this.runA);
    this.b = this.session.store.runById(this.runB);
    this.loaded = true;
    if (!this.isReady) return;
    this.sendHeader();
    if (this.shown) this.sendView();
  }

  /** The traces whose answers differ (the tests read this). */
  get differing(): string[] {
    return this.table.differingIds;
  }

  answerOf(refId: string, runId: string, traceId: string): string | undefined {
    if (refId !== this.ref.id || (runId !== this.runA && runId !== this.runB)) return undefined;
    const row = this.table.get(traceId);
    const side = runId === this.runA ? row?.a : row?.b;
    return side ? side.answer : row ? '(no answer in this run)' : undefined;
  }

  protected onReady(): void {
    if (this.loaded) this.sendHeader();
  }

  protected onMessage(message: CompareMessage): Promise<void> {
    switch (message.type) {
      case 'query':
        this.table.setFilters(message.filters);
        this.shown = { start: message.start, end: Math.min(message.end, message.start + MAX_WINDOW), activeKey: message.activeKey };
        if (this.loaded) this.sendView();
        return Promise.resolve();
      case 'diff':
        return this.diff(message.traceId);
      case 'submit':
        return this.submit(message.traceId, message.side);
      case 'carryVerdict':
        return this.carryVerdict(message.traceId, message.from);
      default:
        return Promise.resolve();
    }
  }

  async diff(traceId: string): Promise<void> {
    const uri = (run: string) =>
      vscode.Uri.from({
        scheme: RUN_ANSWER_SCHEME,
        path: `/${run}/${traceId.replace(/[/\\]/g, '\u2215')}/answer.txt`,
        query: new URLSearchParams({ ref: this.ref.id, run, trace: traceId }).toString(),
      });
    const title = `${traceId}: ${this.a?.target ?? this.runA} ↔ ${this.b?.target ?? this.runB}`;
    // Beside the table, which keeps the focus: the Enter that opened it goes nowhere else (in the same group the
    // table was hidden and the read-only diff took the focus), and the next row's Enter replaces this preview.
    await vscode.commands.executeCommand('vscode.diff', uri(this.runA), uri(this.runB), title, { preview: true, preserveFocus: true, viewColumn: vscode.ViewColumn.Beside });
  }

  /** Submits one run's answer to the trace: one action, journaled as that run's answer. */
  async submit(traceId: string, side: 'a' | 'b'): Promise<void> {
    const row = this.table.get(traceId);
    const answer = side === 'a' ? row?.a : row?.b;
    const runId = side === 'a' ? this.runA : this.runB;
    if (!answer) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Run {0} has no answer to {1}.', runId, traceId));
      return;
    }
    const failed = (reason: string) => vscode.l10n.t('Submitting {0} failed: {1}', traceId, reason);
    const done = await withClient(this.ctx, this.ref, failed, async (client) => {
      await this.session.submitAnswer(client, traceId, answer.answer, runId);
      return true;
    });
    if (done) void vscode.window.showInformationMessage(vscode.l10n.t("Submitted run {0}'s answer to {1}.", runId, traceId));
  }

  /** Carries one run's verdict on a trace over to the other run, whose answer is the same (journaled by run). */
  async carryVerdict(traceId: string, from: 'a' | 'b'): Promise<void> {
    const row = this.table.get(traceId);
    const side = (s: 'a' | 'b') => ({ run: s === 'a' ? this.runA : this.runB, answer: row?.[s]?.answer });
    try {
      await this.session.carryVerdict(traceId, side(from), side(from === 'a' ? 'b' : 'a'));
    } catch (error) {
      void vscode.window.showWarningMessage(vscode.l10n.t('The verdict was not carried over: {0}', error instanceof Error ? error.message : String(error)));
      return;
    }
    this.table.changed(traceId);
    if (this.shown) this.sendView();
  }

  /** Which runs, and the counts: once per comparison read. */
  private sendHeader(): void {
    const run = (id: string, info: RunInfo | undefined) => ({ runId: id, target: info?.target ?? 'unknown target', cost: info ? costText(runCost(info)) : 'no cost: the run is not in the journal' });
    const only = this.only ? [...this.only] : null;
    const state = { refId: this.ref.id, runA: this.runA, runB: this.runB, only };
    this.lastHeader = { type: 'compare', title: this.ref.label, a: run(this.runA, this.a), b: run(this.runB, this.b), total: this.table.total, differing: this.table.differing, state };
    this.post(this.lastHeader);
  }

  /** The rows the page shows, under its filters, and where its active trace is now. */
  private sendView(): void {
    const { start, end, activeKey } = this.shown ?? { start: 0, end: 0, activeKey: null };
    this.lastView = { type: 'view', ...this.table.window(start, end, activeKey) };
    this.post(this.lastView);
  }
}
