import * as vscode from 'vscode';
import { describeStats, heldBack, LOCAL_STATES, runCharts, runStats, skippedNote, STATE_LABELS } from '../core';
import type { TraceInfo, TraceStore } from '../core';
import type { Ctx } from './ctx';
import type { EvaluationRef } from './registry';
import { processDetailsUrl } from './settingsModel';
import { errorText, showError } from './log';
import { preview } from './treeModel';
import { toDisposable } from './lifecycle';
import { PanelController, PanelHost } from './panelHost';
import { progressStateSchema, webviewMessageSchema } from '../webview/messageSchemas';
import type { HostMessage, ProgressState, RowTuple, RunLine, WebviewMessage } from '../webview/protocol';

export const PROGRESS_VIEW_TYPE = 'evalRunner.progress';
const FIRST_CHUNK = 500;
const CHUNK = 20_000;
const ROWS_DURING_RUN_MS = 1000;

/** One Process Details panel per evaluation, restored after a reload from the state its page saved. */
export class ProgressPanels extends PanelHost<ProgressState, ProgressPanel> {
  constructor(ctx: Ctx) {
    super(ctx, {
      viewType: PROGRESS_VIEW_TYPE,
      title: 'Process Details',
      stateSchema: progressStateSchema,
      keyOf: (state) => state.refId,
      create: (panel, ref) => new ProgressPanel(ctx, panel, ref),
    });
  }

  open(ref: EvaluationRef): void {
    this.show(ref, { refId: ref.id });
  }
}

class ProgressPanel extends PanelController<WebviewMessage, HostMessage> {
  private sent = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  /** Rows are being streamed: an update waits, since what was sent is not yet complete. */
  private streaming = false;
  private generation = 0;
  private statsLine: { key: string; at: number; line: RunLine } | undefined;
  /** The store whose changes are followed, the traces changed since the last update, and whether all may have. */
  private watched: TraceStore | undefined;
  private unwatch: (() => void) | undefined;
  private readonly dirty = new Set<string>();
  private allDirty = false;
  private rowsSentAt = 0;

  constructor(ctx: Ctx, panel: vscode.WebviewPanel, ref: EvaluationRef) {
    super(ctx, panel, ref, {
      title: 'Process Details',
      script: 'webview/progress.js',
      schema: webviewMessageSchema,
      appAttributes: `data-states="${LOCAL_STATES.join(',')}" data-labels="${escapeAttribute(JSON.stringify(STATE_LABELS))}"`,
    });
    panel.title = `Process Details: ${ref.label}`;
    this._register(
      ctx.registry.onDidChangeSession((r) => {
        if (r.id === ref.id) this.scheduleUpdate();
      }),
    );
    this._register(
      toDisposable(() => {
        clearTimeout(this.timer);
        this.unwatch?.();
      }),
    );
  }

  protected onReady(): void {
    this.sendAll();
  }

  protected onMessage(message: WebviewMessage): void {
    const run = (command: string, ...args: unknown[]) => void vscode.commands.executeCommand(command, this.ref.id, ...args);
    const known = 'traceId' in message && this.session.store.get(message.traceId);
    switch (message.type) {
      case 'openTrace':
        if (known) run('evalRunner.openTrace', message.traceId);
        return;
      case 'openProcessDetails':
        return run('evalRunner.openProcessDetails');
      case 'run':
        return run('evalRunner.runEvaluation');
      case 'rerun':
        return run('evalRunner.rerunTraces', undefined, message.shown ?? undefined);
      case 'cancel':
        return this.session.cancel();
      case 'rendered':
        return this.ctx.log.debug(`Process Details rendered ${message.rows} rows in ${message.ms.toFixed(1)} ms.`);
      case 'verdict':
        if (known && known.answer !== undefined) void this.judge(message.traceId, message.rating ?? undefined, known.note);
        return;
      case 'note':
        if (known) run('evalRunner.editNote', message.traceId);
        return;
      case 'details':
        if (known) this.post({ type: 'details', traceId: known.traceId, prompt: known.prompt ?? '', answer: known.answer ?? null, note: known.note ?? null });
        return;
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
    this.watch(this.session.store);
    this.dirty.clear();
    this.allDirty = false;
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
        if (generation !== this.generation || this.isDisposed) return;
      }
    }
  }

  private scheduleUpdate(): void {
    if (!this.isReady || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.streaming) return this.scheduleUpdate();
      this.update();
    }, 250);
  }

  /**
   * Sends the rows that changed since the last look: those the store named (never a scan of every trace, which
   * at 100k cost the extension host most of a run's time), or everything when the store itself was replaced (a
   * reload), a change touched every trace, or traces were added.
   */
  private update(): void {
    const store = this.session.store;
    if (store !== this.watched || this.allDirty || this.sent.size !== store.traces.size) return this.sendAll();
    // During a run the rows follow once a second (progress four times): a trace goes running → answered →
    // submitted within a second, so its row is sent once, not three times, and the webview keeps up at 100k.
    if (this.session.isRunning && Date.now() - this.rowsSentAt < ROWS_DURING_RUN_MS) {
      this.postProgress();
      return;
    }
    this.rowsSentAt = Date.now();
    const changed: RowTuple[] = [];
    for (const id of this.dirty) {
      const t = store.get(id);
      if (!t) continue;
      const sig = signature(t);
      if (this.sent.get(id) === sig) continue;
      this.sent.set(id, sig);
      changed.push(row(t));
    }
    this.dirty.clear();
    if (changed.length) this.post({ type: 'update', rows: changed });
    this.postProgress();
  }

  /** Follows the session's store (replaced on every load): which traces change, and whether all may have. */
  private watch(store: TraceStore): void {
    if (store === this.watched) return;
    this.unwatch?.();
    this.watched = store;
    this.unwatch = store.onTraceChanged((t) => {
      if (t) this.dirty.add(t.traceId);
      else this.allDirty = true;
    });
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

  // The latest run's figures, recomputed only when its answers or failures changed, and at most once a second
  // during a run: sorting 100k latencies every 250 ms would cost the extension host ~10 ms each time.
  private runLine(): RunLine | null {
    const run = this.session.store.currentRun;
    if (!run) return null;
    const key = `${run.runId}|${run.answered}|${run.failed}|${run.lastAnswerAt ?? ''}|${run.endedAt ?? ''}`;
    const cached = this.statsLine;
    // While the run goes on, its figures and charts are redrawn once a second, not on every update.
    if (cached && (cached.key === key || (cached.line.runId === run.runId && this.session.isRunning && Date.now() - cached.at < 1000))) return cached.line;
    const stats = runStats(run);
    const line = { runId: run.runId, target: run.target, stats: describeStats(stats), charts: runCharts(run, stats.latencyMs?.max) };
    this.statsLine = { key, at: Date.now(), line };
    return line;
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

function pageOrProblem(page: ReturnType<typeof processDetailsUrl>): string {
  return 'url' in page ? page.url : page.problem;
}
