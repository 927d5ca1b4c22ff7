// Run Details' header and summary: the title, the run buttons, the progress bar, a chip per state and the
// run's figures.
import type { ProgressMessage, RunLine } from '../protocol';
import { runChartFigures } from './charts';
import { el, icon, iconButton, setText } from './dom';
import type { IconName } from './icons';

export const STATE_ICONS: Readonly<Record<string, IconName>> = {
  pending: 'circle-outline',
  running: 'sync',
  answered: 'comment',
  submitted: 'pass',
  failed: 'error',
  skipped: 'debug-step-over',
};

export class Header {
  readonly element = el('header', 'header');
  readonly title = el('h1', 'title', 'Run Details');
  readonly subtitle = el('div', 'subtitle');
  readonly run = iconButton('play', 'Run');
  readonly rerun = iconButton('debug-rerun', 'Rerun…', 'button secondary');
  readonly cancel = iconButton('debug-stop', 'Cancel', 'button secondary');
  readonly pause = iconButton('debug-pause', 'Pause', 'button secondary');
  readonly resume = iconButton('debug-continue', 'Resume', 'button secondary');
  readonly concurrency = iconButton('settings-gear', 'Concurrency…', 'button secondary');
  readonly serviceLink = iconButton('link-external', "Service's Process Details", 'button secondary');

  constructor() {
    this.rerun.title = 'Rerun traces: the failed, those marked bad or noted, or the rows shown here';
    this.pause.title = 'Pause the run: the calls in flight finish, no new one starts until Resume';
    this.concurrency.title = 'Set how many target calls the run keeps in flight at most, from now on';
    const actions = el('div', 'actions');
    actions.append(this.run, this.rerun, this.pause, this.resume, this.concurrency, this.cancel, this.serviceLink);
    this.element.append(this.title, this.subtitle, actions);
  }

  /** Run and Rerun while idle; Pause (or Resume while paused), Concurrency… and Cancel while running. */
  showRunning(running: boolean, paused: boolean): void {
    // The button pressed gives way to its other half: keep the keyboard's place on it.
    const refocus = (document.activeElement === this.pause && paused) || (document.activeElement === this.resume && !paused);
    hide(this.run, running);
    hide(this.rerun, running);
    hide(this.cancel, !running);
    hide(this.pause, !running || paused);
    hide(this.resume, !running || !paused);
    hide(this.concurrency, !running);
    if (refocus && running) (paused ? this.resume : this.pause).focus();
  }
}

/** Hides or shows a node, touching it only when that changes (this runs at every progress message). */
function hide(node: HTMLElement, hidden: boolean): void {
  if (node.hidden !== hidden) node.hidden = hidden;
}

export class Summary {
  readonly element = el('section', 'summary');
  private readonly bar = el('div', 'bar');
  private readonly barFill = el('div', 'bar-fill');
  private readonly percent = el('div', 'percent', '0%');
  private readonly chipCounts = new Map<string, HTMLElement>();
  private readonly stats = el('div', 'stats');
  private readonly runStats = el('div', 'run-stats');
  private readonly cost = el('div', 'run-cost');
  private readonly lastError = el('div', 'last-error');
  private readonly notice = el('div', 'notice');
  /** The latest run's charts, redrawn when its figures change. */
  readonly charts = el('div', 'charts');
  private chartsRun = '';
  /** Charts off ("Charts" unchecked): the latest line with charts is kept, drawn once they are shown (undefined: none). */
  private chartsShown = true;
  private chartsOwed: RunLine | null | undefined;

  constructor(
    private readonly states: readonly string[],
    labels: Readonly<Record<string, string>>,
  ) {
    this.bar.append(this.barFill);
    this.bar.setAttribute('role', 'progressbar');
    this.bar.setAttribute('aria-valuemin', '0');
    this.bar.setAttribute('aria-valuemax', '100');
    // A progress bar needs a name of its own: a screen reader says "Traces submitted, 83%".
    this.bar.setAttribute('aria-label', 'Traces submitted');
    const chips = el('div', 'chips');
    for (const s of states) {
      const chip = el('span', `chip state-${s}`);
      const count = el('b', 'chip-count', '0');
      chip.append(icon(STATE_ICONS[s] ?? 'circle-outline'), el('span', 'chip-label', ` ${labels[s] ?? s} `), count);
      this.chipCounts.set(s, count);
      chips.append(chip);
    }
    this.notice.setAttribute('role', 'status');
    this.element.append(this.percent, this.bar, chips, this.stats, this.runStats, this.cost, this.lastError, this.notice, this.charts);
  }

  show(m: ProgressMessage): void {
    const done = m.counts.submitted + m.counts.failed + m.counts.skipped;
    const pct = m.total ? Math.floor((100 * m.counts.submitted) / m.total) : 0;
    setText(this.percent, `${pct}% submitted`);
    // Scaled, not sized: a new width laid the summary out again at each update; a transform is only painted.
    const scale = `scaleX(${m.total ? done / m.total : 0})`;
    if (this.barFill.style.transform !== scale) this.barFill.style.transform = scale;
    if (this.bar.getAttribute('aria-valuenow') !== String(pct)) this.bar.setAttribute('aria-valuenow', String(pct));
    for (const s of this.states) setText(this.chipCounts.get(s)!, (m.counts[s as keyof typeof m.counts] ?? 0).toLocaleString());
    setText(this.stats, statsLine(m));
    setText(this.runStats, m.run ? `Run ${m.run.runId} · ${m.run.target}${m.run.stats ? ` · ${m.run.stats}` : ''}` : '');
    setText(this.cost, m.run ? `Cost: ${m.run.cost}` : '');
    setText(this.lastError, m.lastError ? `Last error: ${m.lastError}` : '');
    setText(this.notice, m.notice ?? '');
    this.showCharts(m.run);
  }

  /** Shows or hides the charts: hidden, new ones are not drawn (during a run, every 3 s); shown, the latest are. */
  setChartsShown(shown: boolean): void {
    this.chartsShown = shown;
    if (shown && this.chartsOwed !== undefined) this.drawCharts(this.chartsOwed);
  }

  /** Drawn when the host sends charts (it does only when they changed); a line without them keeps those drawn. */
  private showCharts(run: RunLine | null): void {
    if (run && !run.charts) return;
    const key = run ? run.runId : '';
    if (!run?.charts && key === this.chartsRun) return;
    this.chartsRun = key;
    if (this.chartsShown) this.drawCharts(run);
    else this.chartsOwed = run;
  }

  private drawCharts(run: RunLine | null): void {
    this.chartsOwed = undefined;
    this.charts.replaceChildren(...(run?.charts ? runChartFigures(run.charts, run.runId) : []));
  }
}

function statsLine(m: ProgressMessage): string {
  const parts = [`${m.counts.submitted.toLocaleString()} / ${m.total.toLocaleString()} submitted`];
  if (m.running && m.paused) parts.push('Paused: the calls in flight finish, no new one starts until Resume');
  else if (m.running) parts.push(`${m.ratePerSecond.toFixed(1)} traces/s`, m.etaSeconds === null ? 'ETA –' : `ETA ${Math.ceil(m.etaSeconds)} s`);
  if (m.running && m.concurrency !== null) parts.push(`at most ${m.concurrency} in flight`);
  if (m.waiting) parts.push(m.waiting);
  return parts.join(' · ');
}
