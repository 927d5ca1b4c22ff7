// What a window shows of the runs it follows: the status bar item, the palette's Cancel Run, each run's toast.
import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../lifecycle';
import { costText, holdProgressText, progressText, usdText, WAITING_FOR_WINDOW } from '../../core';
import type { RunProgress } from '../../core';
import type { EvaluationRef } from '../evaluations/registry';
import { BarPace, Beat } from '../progressPace';

/** The runs this window follows, in the status bar (one item for all of them) and in the `evalRunner.running` context. */
export class RunStatus extends Disposable {
  private readonly status = this._register(vscode.window.createStatusBarItem('evalRunner.run', vscode.StatusBarAlignment.Left, 50));
  private readonly active = new Map<string, { ref: EvaluationRef; progress: RunProgress | undefined }>();
  private running = false;
  private readonly drawn = new Map<string, RunProgress>();
  /** Each run's status bar draws, once a second (progressShown). */
  private readonly beats = new Map<string, Beat>();

  constructor() {
    super();
    this.status.name = 'Eval Runner';
    // A menu: Open Run Details, Pause or Resume, Set Concurrency…, Cancel (runMenu.ts).
    this.status.command = 'evalRunner.runActions';
    this._register(toDisposable(() => this.beats.forEach((beat) => beat.cancel())));
  }

  /** Whether this window follows a run of the evaluation. */
  has(refId: string): boolean {
    return this.active.has(refId);
  }

  /** A run is followed from now on: shown by its evaluation until its first progress. */
  started(ref: EvaluationRef): void {
    this.active.set(ref.id, { ref, progress: undefined });
    this.update();
  }

  ended(ref: EvaluationRef): void {
    this.beats.get(ref.id)?.cancel();
    this.beats.delete(ref.id);
    this.active.delete(ref.id);
    this.update();
  }

  /**
   * The toast and the status bar follow a run's progress, fed at a reader's pace (progressPace.ts) by the same event
   * as the tree and Run Details: the toast's words change with each call, its bar once a second (BarPace), and the
   * status bar's counts once a second or when the run's state changes (Beat).
   */
  progressShown(ref: EvaluationRef, progress: vscode.Progress<{ message?: string; increment?: number }>): (p: RunProgress) => void {
    const bar = new BarPace();
    // Kept by the run, so its end and the window's dispose drop a draw held back (it would draw a run gone).
    this.beats.get(ref.id)?.cancel();
    const beat = new Beat(() => this.update());
    this.beats.set(ref.id, beat);
    return (p) => {
      this.active.set(ref.id, { ref, progress: p });
      this.drawn.set(ref.id, p);
      const done = p.counts.submitted + p.counts.failed + p.counts.skipped;
      // The status bar before the toast: VS Code sends a status bar item's change on a timer of its own (0 ms) and
      // the toast's as it comes, so set first, the item's change leaves with the toast's rather than after it.
      beat.changed(`${p.paused === true}|${p.hold?.kind ?? ''}|${p.waitingFor ?? ''}|${done === p.total}`);
      // An increment of 0 keeps the bar determinate without moving it.
      progress.report({ message: progressText('', p).replace(/^: /, ''), increment: bar.step(p.total ? (100 * done) / p.total : 0) });
    };
  }

  /**
   * The progress the toast last drew of an evaluation's run, which the status bar draws within a second (kept after
   * the run ends, for the tests).
   */
  lastDrawn(refId: string): RunProgress | undefined {
    return this.drawn.get(refId);
  }

  private update(): void {
    // The palette offers Cancel Run only while a run runs (set on a change, not on every progress event).
    if (this.running !== this.active.size > 0) {
      this.running = this.active.size > 0;
      void vscode.commands.executeCommand('setContext', 'evalRunner.running', this.running);
    }
    if (this.active.size === 0) {
      this.status.hide();
      return;
    }
    const runs = [...this.active.values()];
    const parts = runs.map(({ ref, progress }) => (progress ? `${progress.counts.submitted}/${progress.total}${spent(progress)}${progress.paused ? ' paused' : ''}` : `${ref.kind} ${ref.evaluationId}…`));
    // A run held by the service (down, or refusing the token) says so: its answers wait, nothing is wrong locally.
    // A vscode-lm run with no window to serve its chat model (this window is attaching) says so too.
    const held = runs.flatMap(({ ref, progress: p }) =>
      p?.hold ? [`${ref.label}: ${holdProgressText(p.hold)}`] : p?.waitingFor === 'window' ? [`${ref.label}: ${WAITING_FOR_WINDOW}`] : [],
    );
    // A still icon: the counts change every second, and a spinning one keeps the whole window drawing frames.
    this.status.text = `${held.length ? '$(debug-pause)' : '$(beaker)'} Eval Runner ${parts.join(' · ')}${held.length === 1 && runs.length === 1 ? ` · ${held[0]!.slice(runs[0]!.ref.label.length + 2)}` : ''}`;
    const costs = runs.flatMap(({ ref, progress: p }) => (p?.cost ? [vscode.l10n.t('{0}: cost {1}', ref.label, costText(p.cost))] : []));
    this.status.tooltip = [...(held.length ? held : [vscode.l10n.t('Eval Runner is running; click for Run Details, Pause, Concurrency or Cancel')]), ...costs].join('\n');
    this.status.show();
  }
}

/** A run's spend so far beside its counts (" · $0.0123"); nothing when it has no cost (the tooltip says why). */
function spent(p: RunProgress): string {
  return p.cost?.usd !== null && p.cost?.usd !== undefined ? ` · ${usdText(p.cost.usd)}` : '';
}
