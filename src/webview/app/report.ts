// The report page: one self-contained HTML file written by `eval-runner report`. Reads its data from the JSON
// block beside this script; every string in it is adversarial text, set only as textContent.
import { Row } from '../protocol';
import type { ReportData, ReportRow, ReportRun } from '../reportData';
import { runChartFigures } from './charts';
import { el, onTypingPause, searchBox, select } from './dom';
import { containsQuery } from '../textMatch';
import { createGrid } from './grid';
import type { Column } from './grid';

const data = JSON.parse(document.getElementById('report-data')!.textContent ?? '{}') as ReportData;
const ms = (v: number) => `${v.toLocaleString('en-US')} ms`;

/** The run's cost and its prices' source, or why it has none (never a guess). */
function costWords(run: ReportRun): string {
  const { usd, source, why } = run.cost;
  if (usd === null) return `no cost: ${why ?? 'no usage reported'}`;
  return `cost $${usd.toFixed(usd >= 1 ? 2 : usd >= 0.01 ? 4 : 6)} (prices: ${source ?? 'none'})`;
}

function runFigures(run: ReportRun): string {
  const parts = [`${run.answered.toLocaleString('en-US')} answered · ${run.submitted.toLocaleString('en-US')} submitted · ${run.failed.toLocaleString('en-US')} failed`];
  if (run.latencyMs) parts.push(`latency p50 ${ms(run.latencyMs.p50)} · p95 ${ms(run.latencyMs.p95)} · max ${ms(run.latencyMs.max)}`);
  if (run.queueWaitMs) parts.push(`worker wait p50 ${ms(run.queueWaitMs.p50)} · p95 ${ms(run.queueWaitMs.p95)} · max ${ms(run.queueWaitMs.max)}`);
  if (run.ttftMs) parts.push(`first token p50 ${ms(run.ttftMs.p50)} · p95 ${ms(run.ttftMs.p95)}`);
  if (run.tokens) parts.push(`tokens ${run.tokens.prompt.toLocaleString('en-US')} prompt + ${run.tokens.completion.toLocaleString('en-US')} completion`);
  parts.push(costWords(run));
  return parts.join(' · ');
}

function runSection(run: ReportRun): HTMLElement {
  const section = el('section', 'run');
  section.dataset.run = run.runId;
  const when = `${run.startedAt.replace('T', ' ').slice(0, 19)} → ${run.endedAt ? run.endedAt.replace('T', ' ').slice(0, 19) : 'not ended'}`;
  section.append(el('h2', '', `Run ${run.runId}`), el('div', 'subtitle', `${run.target}${run.shard ? ` · shard ${run.shard}` : ''} · ${when}`), el('div', 'run-figures', runFigures(run)));
  const errors = Object.entries(run.errors);
  if (errors.length) {
    const list = el('ul', 'errors');
    for (const [reason, n] of errors.slice(0, 10)) list.append(el('li', '', `${n.toLocaleString('en-US')} × ${reason}`));
    section.append(list);
  }
  const charts = el('div', 'charts');
  charts.append(...runChartFigures(run, run.runId));
  section.append(charts);
  return section;
}

/** Several runs side by side: one column each, the latest first (many runs overflow to the right, the old ones). */
function comparison(oldestFirst: readonly ReportRun[]): HTMLElement {
  const runs = [...oldestFirst].reverse();
  const table = el('table', 'comparison');
  const head = el('tr');
  head.append(el('th', '', ''), ...runs.map((r) => el('th', '', `${r.runId} (${r.target})`)));
  const rows: Array<[string, (r: ReportRun) => string]> = [
    ['answered', (r) => r.answered.toLocaleString('en-US')],
    ['submitted', (r) => r.submitted.toLocaleString('en-US')],
    ['failed', (r) => r.failed.toLocaleString('en-US')],
    ['latency p50', (r) => (r.latencyMs ? ms(r.latencyMs.p50) : '–')],
    ['latency p95', (r) => (r.latencyMs ? ms(r.latencyMs.p95) : '–')],
    ['latency max', (r) => (r.latencyMs ? ms(r.latencyMs.max) : '–')],
    ['tokens', (r) => (r.tokens ? `${r.tokens.prompt.toLocaleString('en-US')} + ${r.tokens.completion.toLocaleString('en-US')}` : '–')],
    ['cost', costWords],
  ];
  // Apart from the latency, and only where a target measured it (a worker pool).
  if (runs.some((r) => r.queueWaitMs)) rows.splice(6, 0, ['worker wait p50', (r) => (r.queueWaitMs ? ms(r.queueWaitMs.p50) : '–')]);
  table.append(head);
  for (const [name, value] of rows) {
    const tr = el('tr');
    tr.append(el('th', '', name), ...runs.map((r) => el('td', '', value(r))));
    table.append(tr);
  }
  return table;
}

type ColumnKey = 'trace' | 'state' | 'prompt' | 'answer' | 'latency' | 'verdict' | 'error';
const COLUMNS: ReadonlyArray<Column<ColumnKey>> = [
  { key: 'state', title: 'State', className: 'c-state' },
  { key: 'trace', title: 'Trace', className: 'c-id' },
  { key: 'prompt', title: 'Prompt', className: 'c-prompt' },
  { key: 'answer', title: 'Answer', className: 'c-answer' },
  { key: 'latency', title: 'Latency', className: 'c-ms' },
  { key: 'verdict', title: 'Verdict', className: 'c-verdict' },
  { key: 'error', title: 'Error', className: 'c-error' },
];

function cellText(r: ReportRow, key: ColumnKey): string {
  switch (key) {
    case 'trace':
      return r[Row.TraceId];
    case 'state':
      return data.labels[r[Row.State]] ?? r[Row.State];
    case 'prompt':
      return r[Row.Prompt].slice(0, 300);
    case 'answer':
      return (r[Row.Answer] ?? '').slice(0, 300);
    case 'latency':
      return r[Row.LatencyMs] === null ? '' : ms(r[Row.LatencyMs]);
    case 'verdict':
      return r[Row.Verdict] ?? '';
    case 'error':
      return r[Row.Error] ?? '';
  }
}

/** The traces: a virtualised table with state and verdict filters, a search, and the full text of the active row. */
function tracesSection(): HTMLElement {
  const section = el('section', 'traces');
  const details = el('section', 'details');
  details.setAttribute('aria-live', 'polite');
  const grid = createGrid<ReportRow, ColumnKey>({
    label: 'Traces',
    columns: COLUMNS,
    empty: 'No trace matches the filters.',
    keyOf: (r) => r[Row.TraceId],
    rowClass: (r) => `state-${r[Row.State]}${r[Row.Verdict] ? ` verdict-${r[Row.Verdict]}` : ''}`,
    rowLabel: (r) => `${r[Row.TraceId]}, ${data.labels[r[Row.State]] ?? r[Row.State]}`,
    cell: (r, column, node) => {
      node.textContent = cellText(r, column.key);
      if (column.key === 'trace') node.title = r[Row.TraceId];
    },
    onActive: (r) => showDetails(details, r),
    onOpen: (r) => showDetails(details, r),
  });
  const filters = { state: 'all', verdict: 'all', search: '' };
  const shown = el('span', 'shown');
  const apply = () => {
    const q = filters.search.toLowerCase();
    const view = data.rows.filter(
      (r) =>
        (filters.state === 'all' || r[Row.State] === filters.state) &&
        (filters.verdict === 'all' || (r[Row.Verdict] ?? 'none') === filters.verdict) &&
        (!q || containsQuery(q, r[Row.TraceId], r[Row.Prompt], r[Row.Answer], r[Row.Note])),
    );
    grid.setRows(view);
    shown.textContent = `${view.length.toLocaleString('en-US')} of ${data.rows.length.toLocaleString('en-US')} traces`;
  };
  const toolbar = el('div', 'toolbar');
  const stateSelect = select('filter', 'Filter by state', [['all', 'All states'], ...data.states.map((s): [string, string] => [s, data.labels[s] ?? s])]);
  stateSelect.addEventListener('change', () => ((filters.state = stateSelect.value), apply()));
  const verdictSelect = select('filter verdict-filter', 'Filter by verdict', [['all', 'All verdicts'], ['good', 'Good'], ['bad', 'Bad'], ['none', 'Not judged']]);
  verdictSelect.addEventListener('change', () => ((filters.verdict = verdictSelect.value), apply()));
  const search = searchBox('Search trace id, prompt, answer or note');
  onTypingPause(search, (v) => ((filters.search = v), apply()));
  toolbar.append(stateSelect, verdictSelect, search, shown);
  section.append(el('h2', '', 'Traces'), toolbar, grid.element, details);
  apply();
  return section;
}

/** The answer, or for a trace with none (failed at the target) the error it failed with. */
function answerOrError(r: ReportRow): HTMLElement[] {
  const answer = r[Row.Answer];
  const error = r[Row.Error];
  if (answer === null && error !== null) return [el('h4', '', 'Error'), el('pre', 'details-text details-error', error)];
  const shown = [el('h4', '', 'Answer'), el('pre', 'details-text', answer ?? '(no answer)')];
  // A failed submission keeps its answer: the error says why it is not at the service.
  return error !== null ? [...shown, el('h4', '', 'Error'), el('pre', 'details-text details-error', error)] : shown;
}

function showDetails(pane: HTMLElement, r: ReportRow): void {
  pane.replaceChildren(
    el('h3', 'details-title', r[Row.TraceId]),
    el('h4', '', 'Prompt'),
    el('pre', 'details-text', r[Row.Prompt]),
    ...answerOrError(r),
    el('div', 'details-note', r[Row.Note] ? `Note: ${r[Row.Note]}` : ''),
  );
}

const app = document.getElementById('app')!;
const header = el('header', 'header');
const counts = data.states.map((s) => `${data.labels[s] ?? s} ${(data.counts[s] ?? 0).toLocaleString('en-US')}`).join(' · ');
header.append(
  el('h1', 'title', `Eval Runner report: ${data.title}`),
  el('div', 'subtitle', `${data.evaluation.origin} · written ${data.generatedAt.replace('T', ' ').slice(0, 19)} UTC by ${data.tool}`),
  el('div', 'stats summary-counts', `${data.total.toLocaleString('en-US')} traces · ${counts}${data.notAnswered ? ` · ${data.notAnswered} submitted as not answered` : ''}`),
);
app.append(header);
if (data.runs.length > 1) app.append(el('h2', '', 'Runs side by side'), comparison(data.runs));
for (const run of data.runs) app.append(runSection(run));
app.append(tracesSection());
performance.mark('evalRunner:reportRendered');
document.body.dataset.rendered = 'true';
