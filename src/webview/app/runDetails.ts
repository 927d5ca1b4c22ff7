// The Run Details webview. Speaks the protocol of src/webview/protocol.ts; saves RunDetailsState for its restorer.
// The table is virtualised (grid.ts): only the rows in view exist in the DOM, so 100,000 traces stay smooth.
import { Row } from '../protocol';
import type { HostMessage, RunDetailsState, RowTuple, TableFilters, VerdictFilter, ViewMessage, WebviewMessage } from '../protocol';
import { afterPaint, el, icon, onTypingPause, searchBox, select, setText, toggle } from './dom';
import { createGrid } from './grid';
import type { Column, Grid } from './grid';
import { Header, STATE_ICONS, Summary } from './runDetailsSummary';
import { SPIN } from './icons';
import type { IconName } from './icons';
import { TableWindow } from './tableWindow';
import { vscodeApi } from './vscodeApi';

// Marks for `npm run bench`: when this script ran and when the first rows arrived, beside the paint marks.
performance.mark('evalRunner:script');

type ColumnKey = 'state' | 'trace' | 'prompt' | 'answer' | 'latency' | 'verdict' | 'error';
const COLUMNS: ReadonlyArray<Column<ColumnKey>> = [
  { key: 'state', title: 'State', className: 'c-state', sortable: true },
  { key: 'trace', title: 'Trace', className: 'c-id', sortable: true },
  { key: 'prompt', title: 'Prompt', className: 'c-prompt' },
  { key: 'answer', title: 'Answer', className: 'c-answer' },
  { key: 'latency', title: 'Latency', className: 'c-ms', sortable: true },
  { key: 'verdict', title: 'Verdict', className: 'c-verdict', sortable: true },
  { key: 'error', title: 'Error', className: 'c-error' },
];
const NO_TRACES = 'No traces yet: run the evaluation or fetch its prompts.';
const VERDICTS: ReadonlyArray<[VerdictFilter, string]> = [['all', 'All verdicts'], ['good', 'Good'], ['bad', 'Bad'], ['none', 'Not judged']];

const vscode = vscodeApi<WebviewMessage, RunDetailsState>();
const app = document.getElementById('app')!;
// State names and labels come from the host (src/core/store/traceStore.ts owns them).
const STATES = (app.dataset.states ?? '').split(',');
const LABELS = JSON.parse(app.dataset.labels ?? '{}') as Record<string, string>;

class ProgressPage {
  private refId: string;
  private showDetails: boolean;
  private showCharts: boolean;
  private readonly filters: TableFilters;
  private readonly table: TableWindow<RowTuple>;
  private readonly header = new Header();
  private readonly summary = new Summary(STATES, LABELS);
  private readonly shown = el('span', 'shown');
  private readonly grid: Grid<RowTuple, ColumnKey>;
  private readonly details = new DetailsPane();
  private activeKey: string | undefined;
  private detailsTimer = 0;
  private firstMessageMarked = false;
  private reportedRender = false;
  private readonly started = performance.now();
  /** A filter change being measured for `npm run bench`, until its rows are painted. */
  private measuring: { name: string; t0: number } | undefined;

  constructor() {
    const saved = vscode.getState() ?? {};
    this.refId = saved.refId ?? '';
    this.showDetails = saved.showDetails === true;
    this.showCharts = saved.showCharts !== false;
    this.filters = {
      stateFilter: saved.stateFilter ?? 'all',
      verdictFilter: saved.verdictFilter ?? 'all',
      search: saved.search ?? '',
      sortKey: saved.sortKey ?? 'trace',
      sortDirection: saved.sortDirection ?? 1,
    };
    this.table = new TableWindow(
      (start, end) => vscode.postMessage({ type: 'query', filters: { ...this.filters }, activeKey: this.activeKey ?? null, start, end }),
      (r) => r[Row.TraceId],
    );
    this.grid = createGrid({
      label: 'Traces',
      columns: COLUMNS,
      rowHeight: 26,
      empty: NO_TRACES,
      ...this.rowBehaviour(),
      onNeed: (first, last) => this.table.need(first, last),
    });
    this.details.element.hidden = !this.showDetails;
    document.body.classList.toggle('with-details', this.showDetails);
    document.body.classList.toggle('with-charts', this.showCharts);
    this.summary.setChartsShown(this.showCharts);
    app.append(this.header.element, this.summary.element, this.toolbar(), this.grid.element, this.details.element);
    this.wireButtons();
  }

  /** The first rows: as many as a tall window shows, under the filters the page was left with. */
  start(): void {
    this.table.query(0, 100);
  }

  receive(m: HostMessage): void {
    switch (m.type) {
      case 'init':
        this.refId = m.refId;
        this.header.title.textContent = `Run Details: ${m.title}`;
        this.header.subtitle.textContent = `${m.kind} evaluation ${m.evaluationId} · ${m.baseUrl}`;
        this.header.serviceLink.title = m.processDetailsUrl;
        this.persist();
        return;
      case 'view':
        return this.view(m);
      case 'details':
        if (m.traceId === this.activeKey) this.details.show(m.traceId, m.prompt, m.answer, m.note, m.error);
        return;
      case 'progress':
        if (m.debuggable !== debuggable) {
          debuggable = m.debuggable;
          this.grid.changed();
        }
        this.summary.show(m);
        this.header.showRunning(m.running, m.paused);
        // Written only when it changes, as setText does (progress arrives once a second during a run).
        const complete = m.total > 0 && m.counts.submitted === m.total ? 'true' : 'false';
        if (document.body.dataset.complete !== complete) document.body.dataset.complete = complete;
        return;
    }
  }

  /** Rows from the host: the page's window of the table, which the grid shows (and asks more of as it scrolls). */
  private view(m: ViewMessage): void {
    if (!this.firstMessageMarked) {
      this.firstMessageMarked = true;
      performance.mark('evalRunner:firstMessage');
    }
    const active = this.table.receive(m, this.grid, this.activeKey);
    this.grid.setSort(this.filters.sortKey, this.filters.sortDirection);
    this.grid.setSource(this.table, active);
    setText(this.shown, `${m.length.toLocaleString()} of ${m.total.toLocaleString()} traces`);
    this.grid.setEmpty(m.total ? 'No trace matches the filters.' : NO_TRACES);
    if (this.showDetails && m.rows.some((r) => r[Row.TraceId] === this.activeKey)) this.requestDetails();
    const measuring = this.measuring;
    if (measuring) {
      this.measuring = undefined;
      afterPaint(() => performance.measure(measuring.name, { start: measuring.t0, detail: { shown: m.length } }));
    }
    if (!this.reportedRender && m.total) this.reportRender(m.total, m.rows.length);
  }

  /**
   * Marks for `npm run bench` (read in the browser) and a 'rendered' message: painted = since this document
   * started; `rows`: the traces the table holds, `shown`: the rows that came to the page for the first paint.
   */
  private reportRender(rows: number, shown: number): void {
    this.reportedRender = true;
    afterPaint(() => {
      performance.mark('evalRunner:firstRows', { detail: { rows: shown } });
      performance.mark('evalRunner:painted', { detail: { rows } });
      vscode.postMessage({ type: 'rendered', rows, ms: performance.now() - this.started });
    });
  }

  private persist(): void {
    vscode.setState({ refId: this.refId, ...this.filters, showDetails: this.showDetails, showCharts: this.showCharts });
  }

  /** Asks the host for the table under the new filters (measured for `npm run bench` until its rows are painted). */
  private refilter(measure?: string): void {
    this.measuring = measure ? { name: measure, t0: performance.now() } : undefined;
    this.persist();
    const { first, last } = this.grid.visibleRange();
    this.table.query(first, Math.max(last, first + 1));
  }

  private toolbar(): HTMLElement {
    const toolbar = el('div', 'toolbar');
    const stateSelect = select('filter', 'Filter by state', [['all', 'All states'], ...STATES.map((s): [string, string] => [s, LABELS[s] ?? s])], this.filters.stateFilter);
    stateSelect.addEventListener('change', () => {
      this.filters.stateFilter = stateSelect.value;
      this.refilter('evalRunner:filter');
    });
    const verdictSelect = select('filter verdict-filter', 'Filter by verdict', VERDICTS, this.filters.verdictFilter);
    verdictSelect.addEventListener('change', () => {
      this.filters.verdictFilter = verdictSelect.value as VerdictFilter;
      this.refilter();
    });
    const search = searchBox('Search trace id, prompt, answer or note', this.filters.search);
    onTypingPause(search, (value) => {
      this.filters.search = value;
      this.refilter('evalRunner:search');
    });
    const { label, box } = toggle('Full text', this.showDetails);
    box.addEventListener('change', () => this.toggleDetails(box.checked));
    const charts = toggle('Charts', this.showCharts);
    charts.label.classList.add('charts-toggle');
    charts.box.addEventListener('change', () => {
      this.showCharts = charts.box.checked;
      document.body.classList.toggle('with-charts', this.showCharts);
      this.summary.setChartsShown(this.showCharts);
      this.persist();
    });
    this.shown.setAttribute('aria-live', 'polite');
    toolbar.append(stateSelect, verdictSelect, search, label, charts.label, this.shown);
    return toolbar;
  }

  private toggleDetails(show: boolean): void {
    this.showDetails = show;
    this.details.element.hidden = !show;
    document.body.classList.toggle('with-details', show);
    this.persist();
    if (show) this.requestDetails();
  }

  private requestDetails(): void {
    clearTimeout(this.detailsTimer);
    this.detailsTimer = window.setTimeout(() => {
      if (this.activeKey !== undefined) vscode.postMessage({ type: 'details', traceId: this.activeKey });
    }, 80);
  }

  private wireButtons(): void {
    this.header.run.addEventListener('click', () => vscode.postMessage({ type: 'run' }));
    this.header.cancel.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
    this.header.pause.addEventListener('click', () => vscode.postMessage({ type: 'steer', action: 'pause' }));
    this.header.resume.addEventListener('click', () => vscode.postMessage({ type: 'steer', action: 'resume' }));
    this.header.concurrency.addEventListener('click', () => vscode.postMessage({ type: 'steer', action: 'concurrency' }));
    // The rows a filter or a search narrowed the table to are a choice of traces too (all rows: no choice).
    this.header.rerun.addEventListener('click', () => vscode.postMessage({ type: 'rerun', shown: this.table.length < this.table.total }));
    this.header.serviceLink.addEventListener('click', () => vscode.postMessage({ type: 'openProcessDetails' }));
  }

  /** How rows look and what they do: cells, labels, opening, sorting, and g / b / n on the active row. */
  private rowBehaviour() {
    return {
      keyOf: (r: RowTuple) => r[Row.TraceId],
      rowClass: (r: RowTuple) => `state-${r[Row.State]}${r[Row.Verdict] ? ` verdict-${r[Row.Verdict]}` : ''}`,
      rowLabel,
      cell: fillCell,
      onOpen: (r: RowTuple) => vscode.postMessage({ type: 'openTrace', traceId: r[Row.TraceId] }),
      onActive: (r: RowTuple) => {
        this.activeKey = r[Row.TraceId];
        // The host places it again when the rows' order changes under a running evaluation.
        vscode.postMessage({ type: 'active', traceId: this.activeKey });
        if (this.showDetails) this.requestDetails();
      },
      onSort: (key: ColumnKey) => {
        if (key !== 'state' && key !== 'trace' && key !== 'latency' && key !== 'verdict') return;
        this.filters.sortDirection = this.filters.sortKey === key ? (-this.filters.sortDirection as 1 | -1) : 1;
        this.filters.sortKey = key;
        this.refilter();
      },
      onKey: (e: KeyboardEvent, r: RowTuple) => rowKey(e, r),
    };
  }
}

function rowLabel(r: RowTuple): string {
  const latency = r[Row.LatencyMs];
  return [r[Row.TraceId], LABELS[r[Row.State]], latency === null ? '' : `${latency} ms`, r[Row.Verdict] ? `rated ${r[Row.Verdict]}` : '', r[Row.Error] ? `error: ${r[Row.Error]}` : '']
    .filter(Boolean)
    .join(', ');
}

function fillCell(r: RowTuple, column: Column<ColumnKey>, node: HTMLElement): void {
  switch (column.key) {
    case 'state':
      node.append(icon(STATE_ICONS[r[Row.State]] ?? 'circle-outline', r[Row.State] === 'running' ? SPIN : ''), el('span', '', ` ${LABELS[r[Row.State]] ?? ''}`));
      return;
    case 'trace':
      node.textContent = r[Row.TraceId];
      node.title = r[Row.TraceId];
      return;
    case 'prompt':
      node.textContent = r[Row.Prompt];
      return;
    case 'answer':
      node.textContent = r[Row.Answer];
      return;
    case 'latency':
      node.textContent = r[Row.LatencyMs] === null ? '' : `${r[Row.LatencyMs]} ms`;
      return;
    case 'verdict':
      if (r[Row.Answer] !== '' || r[Row.Verdict]) node.append(...verdictButtons(r));
      if (debuggable) node.append(actionButton('debug-alt', `Debug ${r[Row.TraceId]}: its prompt through your code, under the debugger`, { type: 'debug', traceId: r[Row.TraceId] }, false));
      return;
    case 'error':
      node.textContent = r[Row.Error] ?? '';
      return;
  }
}

function verdictButtons(r: RowTuple): HTMLButtonElement[] {
  const id = r[Row.TraceId];
  const verdict = r[Row.Verdict];
  const note = r[Row.Note];
  return [
    actionButton(verdict === 'good' ? 'thumbsup-filled' : 'thumbsup', `Mark ${id} good`, { type: 'verdict', traceId: id, rating: verdict === 'good' ? null : 'good' }, verdict === 'good'),
    actionButton(verdict === 'bad' ? 'thumbsdown-filled' : 'thumbsdown', `Mark ${id} bad`, { type: 'verdict', traceId: id, rating: verdict === 'bad' ? null : 'bad' }, verdict === 'bad'),
    actionButton(note ? 'note' : 'comment', note ? `Note: ${note}` : `Add a note to ${id}`, { type: 'note', traceId: id }, !!note),
  ];
}

function actionButton(name: IconName, label: string, message: WebviewMessage, pressed: boolean): HTMLButtonElement {
  const button = el('button', `icon-button${pressed ? ' pressed' : ''}`);
  button.append(icon(name));
  button.tabIndex = -1;
  button.title = label;
  button.setAttribute('aria-label', label);
  button.setAttribute('aria-pressed', pressed ? 'true' : 'false');
  button.addEventListener('click', () => vscode.postMessage(message));
  return button;
}

/** Whether the target is the user's own code, which Debug Trace runs under the debugger (the host says). */
let debuggable = false;

/** Keys on the active row: g good, b bad (again: no verdict), n note, d Debug Trace. */
function rowKey(e: KeyboardEvent, r: RowTuple): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  if (e.key === 'g' || e.key === 'b') {
    const rating = e.key === 'g' ? 'good' : 'bad';
    vscode.postMessage({ type: 'verdict', traceId: r[Row.TraceId], rating: r[Row.Verdict] === rating ? null : rating });
    return true;
  }
  if (e.key === 'n') {
    vscode.postMessage({ type: 'note', traceId: r[Row.TraceId] });
    return true;
  }
  if (e.key === 'd') {
    vscode.postMessage({ type: 'debug', traceId: r[Row.TraceId] });
    return true;
  }
  return false;
}

/** The full prompt, answer and note of the active trace, asked for only while "Full text" is on. */
class DetailsPane {
  readonly element = el('section', 'details');
  private readonly title = el('h2', 'details-title');
  private readonly prompt = el('pre', 'details-text');
  private readonly answer = el('pre', 'details-text');
  private readonly note = el('div', 'details-note');

  constructor() {
    this.element.setAttribute('aria-label', 'Full prompt and answer of the active trace');
    this.element.setAttribute('aria-live', 'polite');
    this.element.append(this.title, el('h3', '', 'Prompt'), this.prompt, el('h3', '', 'Answer'), this.answer, this.note);
  }

  show(traceId: string, prompt: string, answer: string | null, note: string | null, error: string | null): void {
    this.title.textContent = traceId;
    this.prompt.textContent = prompt;
    // A failed trace shows why (its answer first, when the submission was what failed).
    const failed = error ? `Failed: ${error}` : undefined;
    this.answer.textContent = [answer, failed].filter((t) => t !== null && t !== undefined).join('\n\n') || '(no answer yet)';
    this.note.textContent = note ? `Note: ${note}` : '';
  }
}

const page = new ProgressPage();
window.addEventListener('message', (event: MessageEvent<HostMessage | null>) => {
  const m = event.data;
  if (m && typeof m.type === 'string') page.receive(m);
});
vscode.postMessage({ type: 'ready' });
page.start();
