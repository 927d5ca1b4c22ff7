import * as vscode from 'vscode';
import { skippedNote } from '../core/skipped';
import { LOCAL_STATES, STATE_LABELS } from '../core/traceStore';
import type { TraceInfo } from '../core/traceStore';
import type { Ctx } from './ctx';
import type { EvaluationRef } from './registry';
import { processDetailsUrl } from './settingsModel';
import { heldBack } from '../core/progressText';
import { describeStats, runStats } from '../core/runStats';
import { errorText, showError } from './log';
import { preview } from './treeModel';
import { webviewHtml } from './webviewHtml';
import { panelStateSchema, webviewMessageSchema } from './webviewProtocol';
import type { HostMessage, RowTuple } from './webviewProtocol';

export const PROGRESS_VIEW_TYPE = 'evalRunner.progress';
const FIRST_CHUNK = 500;
const CHUNK = 20_000;

/** One Process Details panel per evaluation, restored after a reload by the serializer. */
export class ProgressPanels implements vscode.Disposable {
  private readonly panels = new Map<string, ProgressPanel>();
  private readonly serializer: vscode.Disposable;

  constructor(private readonly ctx: Ctx) {
    this.serializer = vscode.window.registerWebviewPanelSerializer(PROGRESS_VIEW_TYPE, {
      deserializeWebviewPanel: (panel, state: unknown) => {
        const parsed = panelStateSchema.safeParse(state);
        const ref = parsed.success ? ctx.registry.find(parsed.data.refId) : undefined;
        if (!ref) panel.webview.html = '<!doctype html><p>This evaluation is no longer configured.</p>';
        else this.attach(panel, ref);
        return Promise.resolve();
      },
    });
  }

  show(ref: EvaluationRef): void {
    const existing = this.panels.get(ref.id);
    if (existing) {
      existing.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(PROGRESS_VIEW_TYPE, `Process Details: ${ref.label}`, vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.ctx.extension.extensionUri, 'media')],
    });
    this.attach(panel, ref);
  }

  private attach(panel: vscode.WebviewPanel, ref: EvaluationRef): void {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.ctx.extension.extensionUri, 'media')] };
    panel.title = `Process Details: ${ref.label}`;
    panel.iconPath = tabIcon(this.ctx.extension.extensionUri);
    const p = new ProgressPanel(this.ctx, panel, ref);
    this.panels.set(ref.id, p);
    panel.onDidDispose(() => {
      p.dispose();
      this.panels.delete(ref.id);
    });
  }

  dispose(): void {
    this.serializer.dispose();
    for (const p of this.panels.values()) p.panel.dispose();
  }
}

class ProgressPanel {
  private readonly subscriptions: vscode.Disposable[] = [];
  private sent = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private ready = false;
  private disposed = false;
  /** Rows are being streamed: an update waits, since what was sent is not yet complete. */
  private streaming = false;
  private generation = 0;
  private statsLine: { key: string; text: string } | undefined;

  constructor(
    private readonly ctx: Ctx,
    readonly panel: vscode.WebviewPanel,
    private readonly ref: EvaluationRef,
  ) {
    panel.webview.html = this.html();
    this.subscriptions.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      ctx.registry.onDidChangeSession((r) => {
        if (r.id === ref.id) this.scheduleUpdate();
      }),
    );
  }

  private get session() {
    return this.ctx.registry.session(this.ref);
  }

  private post(message: HostMessage): void {
    void this.panel.webview.postMessage(message);
  }

  private receive(raw: unknown): void {
    const parsed = webviewMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.ctx.log.warn(`Ignored a malformed message from the Process Details webview: ${parsed.error.issues[0]?.message ?? ''}`);
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.sendAll();
        return;
      case 'openTrace':
        if (this.session.store.get(message.traceId)) void vscode.commands.executeCommand('evalRunner.openTrace', this.ref.id, message.traceId);
        return;
      case 'openProcessDetails':
        void vscode.commands.executeCommand('evalRunner.openProcessDetails', this.ref.id);
        return;
      case 'run':
        void vscode.commands.executeCommand('evalRunner.runEvaluation', this.ref.id);
        return;
      case 'rerun':
        void vscode.commands.executeCommand('evalRunner.rerunTraces', this.ref.id, undefined, message.shown ?? undefined);
        return;
      case 'cancel':
        this.session.cancel();
        return;
      case 'rendered':
        this.ctx.log.debug(`Process Details rendered ${message.rows} rows in ${message.ms.toFixed(1)} ms.`);
        return;
      case 'verdict': {
        const trace = this.session.store.get(message.traceId);
        if (trace?.answer !== undefined) void this.judge(message.traceId, message.rating ?? undefined, trace.note);
        return;
      }
      case 'note':
        if (this.session.store.get(message.traceId)) void vscode.commands.executeCommand('evalRunner.editNote', this.ref.id, message.traceId);
        return;
      case 'details': {
        const trace = this.session.store.get(message.traceId);
        if (trace) {
          this.post({ type: 'details', traceId: trace.traceId, prompt: trace.prompt ?? '', answer: trace.answer ?? null, note: trace.note ?? null });
        }
        return;
      }
    }
  }

  private async judge(traceId: string, rating: 'good' | 'bad' | undefined, note: string | undefined): Promise<void> {
    try {
      await this.session.setVerdict(traceId, rating, note);
    } catch (error) {
      await showError(this.ctx.log, vscode.l10n.t('Keeping the verdict on {0} failed: {1}', traceId, errorText(error)));
    }
  }

  private sendAll(): void {
    const generation = ++this.generation;
    this.streaming = true;
    void this.streamAll(generation).finally(() => {
      if (generation === this.generation) this.streaming = false;
    });
  }

  private async streamAll(generation: number): Promise<void> {
    const settings = this.ctx.settings;
    this.post({
      type: 'init',
      refId: this.ref.id,
      title: this.ref.label,
      kind: this.ref.kind,
      evaluationId: this.ref.evaluationId,
      baseUrl: this.ref.baseUrl,
      processDetailsUrl: pageOrProblem(processDetailsUrl(settings.processDetailsUrl, this.ref.baseUrl, this.ref.evaluationId, this.ref.kind)),
    });
    this.postProgress();
    this.sent = new Map();
    const traces = [...this.session.store.traces.values()];
    if (traces.length === 0) this.post({ type: 'rows', reset: true, done: true, rows: [] });
    // A small first chunk fills the visible table at once; the rest is built and streams in behind it, one
    // chunk per turn of the event loop, so the first message leaves before 100k rows are built.
    for (let i = 0; i < traces.length; ) {
      const end = Math.min(traces.length, i === 0 ? FIRST_CHUNK : i + CHUNK);
      const rows: RowTuple[] = [];
      for (let j = i; j < end; j++) {
        const t = traces[j]!;
        rows.push(row(t));
        this.sent.set(t.traceId, signature(t));
      }
      this.post({ type: 'rows', reset: i === 0, done: end === traces.length, rows });
      i = end;
      if (i < traces.length) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        // A newer full send (or the panel closing) supersedes this one.
        if (generation !== this.generation || this.disposed) return;
      }
    }
  }

  private scheduleUpdate(): void {
    if (!this.ready || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.streaming) return this.scheduleUpdate();
      const changed: RowTuple[] = [];
      let added = false;
      for (const t of this.session.store.traces.values()) {
        const sig = signature(t);
        const before = this.sent.get(t.traceId);
        if (before === sig) continue;
        if (before === undefined) added = true;
        this.sent.set(t.traceId, sig);
        changed.push(row(t));
      }
      if (added || this.sent.size !== this.session.store.traces.size) this.sendAll();
      else {
        if (changed.length) this.post({ type: 'update', rows: changed });
        this.postProgress();
      }
    }, 250);
  }

  private postProgress(): void {
    const s = this.session;
    const p = s.isRunning ? s.lastProgress : undefined;
    this.post({
      type: 'progress',
      counts: s.store.snapshotCounts(),
      total: s.store.total,
      running: s.isRunning,
      ratePerSecond: p?.ratePerSecond ?? 0,
      etaSeconds: p?.etaSeconds ?? null,
      lastError: p?.lastError ?? s.lastSummary?.message ?? null,
      notice: s.isRunning ? null : skippedNote(s.store.counts.skipped) ?? null,
      // What holds the run back: the adversarial prompts' generation, or a rate limit (the model's or the service's).
      waiting: p?.phase === 'waiting' ? p.waitingReason ?? 'waiting for the adversarial prompts' : p ? heldBack(p) ?? null : null,
      run: this.runLine(),
    });
  }

  // The latest run's figures, recomputed only when its answers or failures changed: sorting 100k latencies
  // every 250 ms of a run would cost the extension host ~10 ms each time for the same line.
  private runLine(): { runId: string; target: string; stats: string } | null {
    const run = this.session.store.currentRun;
    if (!run) return null;
    const key = `${run.runId}|${run.answered}|${run.failed}|${run.lastAnswerAt ?? ''}`;
    if (this.statsLine?.key !== key) this.statsLine = { key, text: describeStats(runStats(run)) };
    return { runId: run.runId, target: run.target, stats: this.statsLine.text };
  }

  private html(): string {
    return webviewHtml(this.panel.webview, this.ctx.extension.extensionUri, {
      title: 'Process Details',
      scripts: ['grid.js', 'progress.js'],
      appAttributes: `data-states="${LOCAL_STATES.join(',')}" data-labels="${escapeAttribute(JSON.stringify(STATE_LABELS))}"`,
    });
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subscriptions) s.dispose();
  }
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function signature(t: TraceInfo): string {
  return `${t.state}|${t.answeredAt ?? ''}|${t.error ?? ''}|${t.rating ?? ''}|${t.note ?? ''}`;
}

function row(t: TraceInfo): RowTuple {
  return [
    t.traceId,
    t.state,
    preview(t.prompt, 120),
    preview(t.answer, 120),
    t.latencyMs ?? null,
    t.error ?? null,
    t.rating ?? null,
    t.note ? preview(t.note, 200) : null,
  ];
}

/** The tab's icon, drawn for light and dark themes. */
export function tabIcon(extensionUri: vscode.Uri): { light: vscode.Uri; dark: vscode.Uri } {
  return {
    light: vscode.Uri.joinPath(extensionUri, 'media', 'tab-light.svg'),
    dark: vscode.Uri.joinPath(extensionUri, 'media', 'tab-dark.svg'),
  };
}

function pageOrProblem(page: ReturnType<typeof processDetailsUrl>): string {
  return 'url' in page ? page.url : page.problem;
}
