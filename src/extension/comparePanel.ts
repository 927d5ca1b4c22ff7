import * as vscode from 'vscode';
import type { ComparedTrace } from '../core/compareRuns';
import type { RunInfo } from '../core/traceStore';
import type { Ctx } from './ctx';
import { errorText, showError } from './log';
import { tabIcon } from './progressPanel';
import type { EvaluationRef } from './registry';
import { preview } from './treeModel';
import { webviewHtml } from './webviewHtml';
import { compareMessageSchema, compareStateSchema } from './webviewProtocol';
import type { CompareHostMessage, CompareTuple } from './webviewProtocol';

export const COMPARE_VIEW_TYPE = 'evalRunner.compare';
/** Read-only documents holding one run's answer, for VS Code's diff editor. */
export const RUN_ANSWER_SCHEME = 'evalrunner-run';

/**
 * Compare Runs: a table of every trace two runs of one evaluation answered (only the differing ones by
 * default) with both answers and latencies, a diff editor per trace, and submitting one run's answer. Reads
 * the journal only: the service is called only to submit.
 */
export class ComparePanels implements vscode.Disposable, vscode.TextDocumentContentProvider {
  private readonly open = new Map<string, ComparePanel>();
  private readonly registrations: vscode.Disposable[];

  constructor(private readonly ctx: Ctx) {
    this.registrations = [
      vscode.workspace.registerTextDocumentContentProvider(RUN_ANSWER_SCHEME, this),
      vscode.window.registerWebviewPanelSerializer(COMPARE_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state: unknown) => {
          const parsed = compareStateSchema.safeParse(state);
          const ref = parsed.success ? ctx.registry.find(parsed.data.refId) : undefined;
          if (!parsed.success || !ref) {
            panel.webview.html = '<!doctype html><p>This evaluation is no longer configured.</p>';
            return;
          }
          await this.attach(panel, ref, parsed.data.runA, parsed.data.runB);
        },
      }),
    ];
  }

  /** `only`: show just these traces (after Rerun Traces, the ones that ran again). */
  async show(ref: EvaluationRef, a: RunInfo, b: RunInfo, only?: ReadonlySet<string>): Promise<void> {
    const key = `${ref.id}|${a.runId}|${b.runId}`;
    const existing = this.open.get(key);
    if (existing) {
      existing.only = only;
      await existing.load();
      existing.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(COMPARE_VIEW_TYPE, 'Compare Runs', vscode.ViewColumn.Active, this.webviewOptions());
    await this.attach(panel, ref, a.runId, b.runId, only);
  }

  /** The panel showing these two runs (the tests drive it through this). */
  find(refId: string, runA: string, runB: string): ComparePanel | undefined {
    return this.open.get(`${refId}|${runA}|${runB}`);
  }

  private webviewOptions(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [vscode.Uri.joinPath(this.ctx.extension.extensionUri, 'media')] };
  }

  private async attach(panel: vscode.WebviewPanel, ref: EvaluationRef, runA: string, runB: string, only?: ReadonlySet<string>): Promise<void> {
    panel.webview.options = this.webviewOptions();
    panel.iconPath = tabIcon(this.ctx.extension.extensionUri);
    const p = new ComparePanel(this.ctx, panel, ref, runA, runB);
    p.only = only;
    const key = `${ref.id}|${runA}|${runB}`;
    this.open.set(key, p);
    panel.onDidDispose(() => {
      p.dispose();
      this.open.delete(key);
    });
    await p.load();
  }

  /** evalrunner-run:/<run>/<trace>/answer.txt?ref=…&run=…&trace=… → that run's answer. */
  provideTextDocumentContent(uri: vscode.Uri): string {
    const q = new URLSearchParams(uri.query);
    for (const p of this.open.values()) {
      const text = p.answerOf(q.get('ref') ?? '', q.get('run') ?? '', q.get('trace') ?? '');
      if (text !== undefined) return text;
    }
    return '(This comparison is closed: open Compare Runs again.)';
  }

  dispose(): void {
    for (const r of this.registrations) r.dispose();
    for (const p of this.open.values()) p.panel.dispose();
  }
}

export class ComparePanel {
  private rows: ComparedTrace[] = [];
  private readonly subscriptions: vscode.Disposable[] = [];
  private ready = false;
  private a: RunInfo | undefined;
  private b: RunInfo | undefined;
  /** Only these traces are shown (Rerun Traces); undefined: every trace either run answered. */
  only: ReadonlySet<string> | undefined;

  constructor(
    private readonly ctx: Ctx,
    readonly panel: vscode.WebviewPanel,
    private readonly ref: EvaluationRef,
    private readonly runA: string,
    private readonly runB: string,
  ) {
    panel.webview.html = this.html();
    this.subscriptions.push(panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)));
  }

  private get session() {
    return this.ctx.registry.session(this.ref);
  }

  async load(): Promise<void> {
    const rows = await this.session.compare(this.runA, this.runB);
    this.rows = this.only ? rows.filter((r) => this.only!.has(r.traceId)) : rows;
    this.a = this.session.store.runById(this.runA);
    this.b = this.session.store.runById(this.runB);
    this.panel.title = `Compare: ${this.ref.label}`;
    if (this.ready) this.send();
  }

  /** The traces whose answers differ (the tests read this). */
  get differing(): string[] {
    return this.rows.filter((r) => r.differs).map((r) => r.traceId);
  }

  answerOf(refId: string, runId: string, traceId: string): string | undefined {
    if (refId !== this.ref.id || (runId !== this.runA && runId !== this.runB)) return undefined;
    const row = this.rows.find((r) => r.traceId === traceId);
    const side = runId === this.runA ? row?.a : row?.b;
    return side ? side.answer : row ? '(no answer in this run)' : undefined;
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = compareMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.ctx.log.warn(`Ignored a malformed message from the Compare Runs webview: ${parsed.error.issues[0]?.message ?? ''}`);
      return;
    }
    const message = parsed.data;
    if (message.type === 'ready') {
      this.ready = true;
      this.send();
    } else if (message.type === 'diff') await this.diff(message.traceId);
    else await this.submit(message.traceId, message.side);
  }

  async diff(traceId: string): Promise<void> {
    const uri = (run: string) =>
      vscode.Uri.from({
        scheme: RUN_ANSWER_SCHEME,
        path: `/${run}/${traceId.replace(/[/\\]/g, '\u2215')}/answer.txt`,
        query: new URLSearchParams({ ref: this.ref.id, run, trace: traceId }).toString(),
      });
    const title = `${traceId}: ${this.a?.target ?? this.runA} ↔ ${this.b?.target ?? this.runB}`;
    await vscode.commands.executeCommand('vscode.diff', uri(this.runA), uri(this.runB), title, { preview: true });
  }

  /** Submits one run's answer to the trace: one action, journaled as that run's answer. */
  async submit(traceId: string, side: 'a' | 'b'): Promise<void> {
    const row = this.rows.find((r) => r.traceId === traceId);
    const answer = side === 'a' ? row?.a : row?.b;
    const runId = side === 'a' ? this.runA : this.runB;
    if (!answer) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Run {0} has no answer to {1}.', runId, traceId));
      return;
    }
    const client = await this.ctx.clientFor(this.ref);
    if (!client) return;
    try {
      await this.session.submitAnswer(client, traceId, answer.answer, runId);
      void vscode.window.showInformationMessage(vscode.l10n.t('Submitted run {0}\'s answer to {1}.', runId, traceId));
    } catch (error) {
      await showError(this.ctx.log, vscode.l10n.t('Submitting {0} failed: {1}', traceId, errorText(error)));
    } finally {
      await client.close();
    }
  }

  private send(): void {
    const run = (id: string, info: RunInfo | undefined) => ({ runId: id, target: info?.target ?? 'unknown target' });
    const rows: CompareTuple[] = this.rows.map((r) => [
      r.traceId,
      preview(r.prompt, 200),
      r.a ? preview(r.a.answer, 300) : null,
      r.b ? preview(r.b.answer, 300) : null,
      r.a?.latencyMs ?? null,
      r.b?.latencyMs ?? null,
      r.differs,
    ]);
    const message: CompareHostMessage = { type: 'compare', title: this.ref.label, a: run(this.runA, this.a), b: run(this.runB, this.b), rows };
    void this.panel.webview.postMessage({ ...message, state: { refId: this.ref.id, runA: this.runA, runB: this.runB } });
  }

  private html(): string {
    return webviewHtml(this.panel.webview, this.ctx.extension.extensionUri, { title: 'Compare Runs', scripts: ['grid.js', 'compare.js'], bodyClass: 'compare' });
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
