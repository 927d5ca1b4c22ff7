import * as vscode from 'vscode';
import { debuggable, FiguresCache, heldBack, holdProgressText, LOCAL_STATES, skippedNote, STATE_LABELS } from '../../core';
import type { TraceStore, Verdict } from '../../core';
import type { Ctx } from '../ctx';
import type { EvaluationRef } from '../evaluations/registry';
import { processDetailsUrl } from '../settings/settingsModel';
import { onSettingsChanged } from '../settings/settings';
import { errorText, showError } from '../log';
import { MAX_WINDOW } from '../panels/rowView';
import { TraceTable } from './traceTable';
import { FollowedRows, SentCharts } from './followedRows';
import { toDisposable } from '../lifecycle';
import { Beat } from '../progressPace';
import { PanelController, PanelHost } from '../panels/panelHost';
import { runDetailsStateSchema, webviewMessageSchema } from '../../webview/messageSchemas';
import type { HostMessage, ProgressMessage, RunDetailsState, RunLine, ViewMessage, WebviewMessage } from '../../webview/protocol';

/** Kept from before the panel had its name: VS Code restores a panel by its view type after a reload or update. */
export const RUN_DETAILS_VIEW_TYPE = 'evalRunner.progress';
const UPDATE_DURING_RUN_MS = 1000;
/** The commands Run Details' Pause, Resume and Concurrency… buttons run (the palette's, src/extension/runs/steerCommands.ts). */
const STEER_COMMANDS = { pause: 'evalRunner.pauseRun', resume: 'evalRunner.resumeRun', concurrency: 'evalRunner.setRunConcurrency' } as const;
/** The page's messages that act on a trace the store must know. */
const ON_TRACE = new Set<WebviewMessage['type']>(['openTrace', 'verdict', 'note', 'debug', 'details']);
/** The local panel's name, apart from the service's Process Details page. */
export const RUN_DETAILS = 'Run Details';

/**
 * One Run Details panel per evaluation (what this editor knows of its runs; the service's own page is Process
 * Details, opened by Open Process Details), restored after a reload from the state its page saved.
 */
export class RunDetailsPanels extends PanelHost<RunDetailsState, RunDetailsPanel> {
  constructor(ctx: Ctx) {
    super(ctx, {
      viewType: RUN_DETAILS_VIEW_TYPE,
      title: RUN_DETAILS,
      tabTitle: (ref) => `${RUN_DETAILS}: ${ref.label}`,
      stateSchema: runDetailsStateSchema,
      keyOf: (state) => state.refId,
      create: (panel, ref) => new RunDetailsPanel(ctx, panel, ref),
    });
    // A visible panel shows the traces' rows: a run followed in another process is read from its journal meanwhile.
    this._register(ctx.registry.showsRows((refId) => this.find(refId)?.needsJournal() === true));
  }

  open(ref: EvaluationRef): void {
    this.show(ref, { refId: ref.id });
  }
}

class RunDetailsPanel extends PanelController<WebviewMessage, HostMessage> {
  private readonly table = new TraceTable(LOCAL_STATES);
  /** The rows the page last asked for, and the trace whose place it follows. */
  private shown: { start: number; end: number; activeKey: string | null } | undefined;
  /** The page's updates: during a run on the beat of its progress, once a second (scheduleUpdate). */
  private readonly beat = new Beat(() => this.update(), UPDATE_DURING_RUN_MS);
  /** The latest run's figures, worked out again at the core's paces during a run (FiguresCache). */
  private readonly figures = new FiguresCache();
  /** The summary and the rows the page was last sent (for the tests). */
  lastProgress: ProgressMessage | undefined;
  lastView: ViewMessage | undefined;
  /** The store whose changes are followed, and the traces changed since the page last got its rows. */
  private watched: TraceStore | undefined;
  private unwatch: (() => void) | undefined;
  private readonly dirty = new Set<string>();
  private allDirty = false;
  /** A run followed in its runner: its rows and figures as the runner tells them, asked once a second. */
  private readonly followed = new FollowedRows();
  private asking = false;
  private askAgain = false;
  private readonly sentCharts = new SentCharts();

  constructor(ctx: Ctx, panel: vscode.WebviewPanel, ref: EvaluationRef) {
    super(ctx, panel, ref, {
      title: RUN_DETAILS,
      script: 'webview/runDetails.js',
      schema: webviewMessageSchema,
      appAttributes: { 'data-states': LOCAL_STATES.join(','), 'data-labels': JSON.stringify(STATE_LABELS) },
    });
    this._register(
      ctx.registry.onDidChangeSession((r) => {
        if (r.id === ref.id) this.scheduleUpdate();
      }),
    );
    // Rows offer Debug Trace while the target is the user's own code.
    this._register(onSettingsChanged(() => this.scheduleUpdate()));
    this._register(
      toDisposable(() => {
        this.beat.cancel();
        this.unwatch?.();
      }),
    );
  }

  /** Whether this panel needs the journal read for what it shows (see FollowedRows.needsJournal). */
  needsJournal(): boolean {
    if (!this.panel.visible) return false;
    const s = this.session;
    return !s.isRunning || this.followed.needsJournal(this.table.showsAll);
  }

  protected onReady(): void {
    this.sentCharts.reset();
    this.post({
      type: 'init',
      refId: this.ref.id,
      title: this.ref.label,
      kind: this.ref.kind,
      evaluationId: this.ref.evaluationId,
      baseUrl: this.ref.baseUrl,
      processDetailsUrl: pageOrProblem(processDetailsUrl(this.ctx.settings.processDetailsUrl, this.ref.baseUrl, this.ref.evaluationId, this.ref.kind)),
    });
    this.postProgress();
  }

  protected onMessage(message: WebviewMessage): void {
    // A row of a followed run told by place may be one the window's store has not read yet: read it first (once, asked
    // by the user), so the trace's command finds it.
    if (ON_TRACE.has(message.type) && 'traceId' in message && !this.session.store.get(message.traceId) && this.followed.answers) {
      void this.session
        .load()
        .catch(() => undefined)
        .then(() => {
          if (!this.isDisposed) this.act(message);
        });
      return;
    }
    this.act(message);
  }

  private act(message: WebviewMessage): void {
    const run = (command: string, ...args: unknown[]) => void vscode.commands.executeCommand(command, this.ref.id, ...args);
    const known = 'traceId' in message && this.session.store.get(message.traceId);
    switch (message.type) {
      case 'query':
        this.table.setFilters(message.filters);
        this.shown = { start: message.start, end: Math.min(message.end, message.start + MAX_WINDOW), activeKey: message.activeKey };
        return this.queried();
      case 'active':
        if (this.shown) this.shown.activeKey = message.traceId;
        return;
      case 'openTrace':
        if (known) run('evalRunner.openTrace', message.traceId);
        return;
      case 'openProcessDetails':
        return run('evalRunner.openProcessDetails');
      case 'run':
        return run('evalRunner.runEvaluation');
      case 'rerun':
        return run('evalRunner.rerunTraces', undefined, message.shown ? this.shownIds() : undefined);
      case 'cancel':
        return this.session.cancel();
      case 'steer':
        return run(STEER_COMMANDS[message.action]);
      case 'rendered':
        return this.ctx.log.debug(`Run Details rendered ${message.rows} rows in ${message.ms.toFixed(1)} ms.`);
      case 'verdict':
        if (known && known.hasAnswer) void this.judge(message.traceId, message.rating ?? undefined, known.note);
        return;
      case 'note':
        if (known) run('evalRunner.editNote', message.traceId);
        return;
      case 'debug':
        if (known) run('evalRunner.debugTrace', message.traceId);
        return;
      case 'details':
        if (known) void this.sendDetails(message.traceId);
        return;
    }
  }

  /** One trace's full texts; a followed run's row may be ahead of the store, which reads the journal first then. */
  private async sendDetails(traceId: string): Promise<void> {
    const told = this.followed.answers ? this.followed.factsOf(traceId) : undefined;
    if (told && told.state !== this.session.store.get(traceId)?.state) await this.session.load().catch(() => undefined);
    const t = this.session.store.get(traceId);
    if (t) this.post({ type: 'details', traceId, prompt: t.prompt ?? '', answer: t.answer ?? null, note: t.note ?? null, error: t.state === 'failed' ? t.error ?? null : null });
  }

  private async judge(traceId: string, rating: Verdict | undefined, note: string | undefined): Promise<void> {
    try {
      await this.session.setVerdict(traceId, rating, note);
      // The reviewer pressed G on this row: it shows the verdict now, not at the next scheduled update.
      this.updateNow();
    } catch (error) {
      await showError(this.ctx.log, vscode.l10n.t('Keeping the verdict on {0} failed: {1}', traceId, errorText(error)));
    }
  }

  /** The traces the page's filters leave (the first 50,000), for Rerun Traces. */
  private shownIds(): string[] {
    this.follow();
    return this.table.idsIn(0, 50_000);
  }

  /** Keeps the table in step with the session's store (replaced on every load) and its changes. */
  private follow(): void {
    const store = this.session.store;
    if (store !== this.watched) {
      this.unwatch?.();
      this.watched = store;
      this.allDirty = true;
      this.table.invalidate(undefined);
      this.unwatch = store.onTraceChanged((t) => {
        this.table.invalidate(t?.traceId);
        if (t) this.dirty.add(t.traceId);
        else this.allDirty = true;
      });
    }
    this.table.refresh(store);
  }

  /**
   * The page's new query answered. A filter or another order needs every trace's state: during a followed run whose
   * list the window has not read (its rows were the runner's), the journal is read first, or the page would show a
   * table of what the window has not read yet ("No trace matches") until the next read.
   */
  private queried(): void {
    const told = this.followed.placed;
    if (this.table.showsAll || !told || this.session.store.traces.size >= told.total) return this.sendView();
    void this.session
      .load()
      .catch(() => undefined)
      .then(() => {
        if (!this.isDisposed) this.sendView();
      });
  }

  /** The rows the page shows, where its active trace is now, and how many rows there are. */
  private sendView(): void {
    this.follow();
    const { start, end, activeKey } = this.shown ?? { start: 0, end: 0, activeKey: null };
    // While a followed run tells its rows, they are the runner's (the store lags them until the run's end).
    const placed = this.table.showsAll ? this.followed.placed : undefined;
    // Rows of a followed run not told yet for this window of the table (the page opened or scrolled): the runner is
    // asked for them now, and they are sent when it tells them (a stale window would have the page ask again and again).
    const byPlace = this.table.showsAll && this.session.isRunning && !this.session.runsHere && !this.followed.refusedAsk;
    if (byPlace && (placed?.start !== start || placed.end !== end)) return void this.updateFollowed();
    const rows = placed ? this.table.placedWindow(placed, activeKey) : this.table.window(this.session.store, start, end, activeKey, this.followed.answers ? this.followed.factsOf : undefined);
    this.post((this.lastView = { type: 'view', ...rows }));
    this.dirty.clear();
    this.allDirty = false;
  }

  /**
   * During a run the page follows once a second, as the toast and the status bar do: a trace goes running →
   * answered → submitted within a second, a filtered view is rebuilt (100,000 traces scanned) no more often than
   * that, and each update costs the editor's renderer a frame.
   */
  private scheduleUpdate(): void {
    if (!this.isReady) return;
    // During a run the session changes with each paced progress update (four a second): the page's second is asked
    // for with the update that ends it, which goes to the workbench with the toast's, the status bar's and the tree's,
    // so the page is drawn at about their frame; the timer, a little later, is only for a last change. Not before the
    // run's first progress: a runner not connected yet answers no view, and the window would read the journal instead.
    if (this.session.isRunning && this.session.lastProgress !== undefined) return this.beat.changed();
    // Before the run's first progress, within a second; not running (the run's end), within 250 ms, and not by a
    // timer the run left a second and its slack away.
    this.beat.within(this.session.isRunning ? UPDATE_DURING_RUN_MS : 250);
  }

  private updateNow(): void {
    if (this.isReady) this.beat.now();
    else this.beat.cancel();
  }

  /** The progress, and the page's rows again when what it shows changed: the view's order or membership, or a trace in its window. */
  private update(): void {
    if (this.session.isRunning && !this.session.runsHere) return void this.updateFollowed();
    this.followed.clear();
    this.draw(false);
  }

  /** The progress, then the rows when the runner told new ones (`told`) or what the page shows changed. */
  private draw(told: boolean): void {
    this.postProgress();
    if (!this.shown) return;
    const version = this.table.version;
    this.follow();
    if (told || this.table.version !== version || this.allDirty || this.windowChanged()) this.sendView();
  }

  /** A run in its runner: the shown rows and the run's figures asked of it, then drawn as update() draws. */
  private async updateFollowed(): Promise<void> {
    // A hidden panel's page is gone (it is not retained): its rows are asked again when it is shown and says ready.
    if (!this.panel.visible) return;
    // Asked while an ask is on its way (the page scrolled or sorted meanwhile): asked again once it is answered, or
    // the page, which waits for its rows, would wait until a row changed.
    if (this.asking) return void (this.askAgain = true);
    this.asking = true;
    let told = false;
    try {
      this.follow();
      // The rows shown by their places in the run's list, which the window need not read. A filter or another order
      // needs every trace's state: the journal is read then, and the rows are the store's.
      const rows = this.shown && this.table.showsAll ? { start: this.shown.start, end: this.shown.end } : undefined;
      told = this.followed.take(await this.session.followedView([], rows), rows);
    } finally {
      this.asking = false;
    }
    if (this.isDisposed || !this.isReady) return;
    if (this.askAgain) {
      this.askAgain = false;
      return this.updateFollowed();
    }
    if (!this.session.isRunning) return this.beat.now();
    this.draw(told);
  }

  /** Whether a trace the page shows changed since it got its rows. */
  private windowChanged(): boolean {
    if (this.dirty.size === 0 || !this.shown) return false;
    const ids = this.table.idsIn(this.shown.start, this.shown.end);
    const changed = ids.some((id) => this.dirty.has(id));
    if (!changed) this.dirty.clear();
    return changed;
  }

  private postProgress(): void {
    const s = this.session;
    const p = s.isRunning ? s.lastProgress : undefined;
    // During a run its counts are the run's progress, as the tree's and the status bar's (the store lags them).
    const counted = p?.total ? p : undefined;
    this.post((this.lastProgress = {
      type: 'progress',
      counts: counted?.counts ?? s.store.snapshotCounts(),
      total: counted?.total ?? s.store.total,
      running: s.isRunning,
      ratePerSecond: p?.ratePerSecond ?? 0,
      etaSeconds: p?.etaSeconds ?? null,
      lastError: p?.lastError ?? s.lastSummary?.message ?? null,
      notice: s.isRunning ? null : skippedNote(s.store.counts.skipped) ?? null,
      // What holds the run back: the adversarial prompts' generation, or a rate limit (the model's or the service's).
      waiting: p?.phase === 'waiting' ? p.waitingReason ?? 'waiting for the adversarial prompts' : p?.hold ? holdProgressText(p.hold) : p ? heldBack(p) ?? null : null,
      paused: p?.paused === true,
      concurrency: p?.targetConcurrency ?? null,
      // A followed run's figures are the runner's; the page gets the charts only when they changed (see SentCharts).
      run: this.sentCharts.strip(this.followed.answers ? this.followed.run ?? null : this.runLine()),
      debuggable: debuggable(this.ctx.settings.target),
    }));
  }

  private runLine(): RunLine | null {
    const run = this.session.store.currentRun;
    return run ? this.figures.of(run, this.session.isRunning) : null;
  }
}

function pageOrProblem(page: ReturnType<typeof processDetailsUrl>): string {
  return 'url' in page ? page.url : page.problem;
}
