// The Compare Runs webview. Speaks the compare messages of src/webview/protocol.ts and saves CompareState, which
// its restorer reads after a reload: which evaluation and runs, the traces it was narrowed to, and the filters.
// Prompts and answers are adversarial text: only ever set as textContent (through the shared grid).
import { CompareRow } from '../protocol';
import type { CompareHostMessage, CompareMessage, CompareState, ComparedRuns, CompareTuple } from '../protocol';
import { el, onTypingPause, searchBox, toggle } from './dom';
import { containsQuery } from '../textMatch';
import { createGrid } from './grid';
import type { Column } from './grid';
import { vscodeApi } from './vscodeApi';

type ColumnKey = 'trace' | 'a' | 'b' | 'msA' | 'msB' | 'actions';
const COLUMNS: ReadonlyArray<Column<ColumnKey>> = [
  { key: 'trace', title: 'Trace', className: 'c-id' },
  { key: 'a', title: 'Run A', className: 'c-answer c-a' },
  { key: 'b', title: 'Run B', className: 'c-answer c-b' },
  { key: 'msA', title: 'A latency', className: 'c-ms' },
  { key: 'msB', title: 'B latency', className: 'c-ms' },
  { key: 'actions', title: 'Actions', className: 'c-actions' },
];

const vscode = vscodeApi<CompareMessage, CompareState>();
const saved = vscode.getState() ?? {};
let onlyDiffering = saved.onlyDiffering !== false;
let search = saved.search ?? '';
let rows: CompareTuple[] = [];
/** The host's part of the saved state (until the first message, what was saved before a reload). */
let compared: ComparedRuns | undefined =
  saved.refId !== undefined && saved.runA !== undefined && saved.runB !== undefined ? { refId: saved.refId, runA: saved.runA, runB: saved.runB, only: saved.only ?? null } : undefined;

const title = el('h1', 'title', 'Compare Runs');
const subtitle = el('div', 'subtitle');
const summary = el('div', 'stats');
summary.setAttribute('aria-live', 'polite');
const shown = el('span', 'shown');

const grid = createGrid<CompareTuple, ColumnKey>({
  label: 'Answers of the two runs',
  columns: COLUMNS,
  empty: 'No traces to compare.',
  keyOf: (r) => r[CompareRow.TraceId],
  rowClass: (r) => (r[CompareRow.Differs] ? 'differs' : 'same'),
  rowLabel: (r) => `${r[CompareRow.TraceId]}, ${r[CompareRow.Differs] ? 'answers differ' : 'same answer'}`,
  cell: fillCell,
  onOpen: (r) => vscode.postMessage({ type: 'diff', traceId: r[CompareRow.TraceId] }),
  // a / b on the active row submit that run's answer (Enter opens the diff).
  onKey(e, r) {
    if (e.ctrlKey || e.metaKey || e.altKey || (e.key !== 'a' && e.key !== 'b')) return false;
    vscode.postMessage({ type: 'submit', traceId: r[CompareRow.TraceId], side: e.key });
    return true;
  },
});

function fillCell(r: CompareTuple, column: Column<ColumnKey>, node: HTMLElement): void {
  const ms = (v: number | null) => (v === null ? '' : `${v} ms`);
  const id = r[CompareRow.TraceId];
  switch (column.key) {
    case 'trace':
      node.textContent = id;
      node.title = r[CompareRow.Prompt];
      return;
    case 'a':
      node.textContent = r[CompareRow.AnswerA] ?? '(no answer)';
      return;
    case 'b':
      node.textContent = r[CompareRow.AnswerB] ?? '(no answer)';
      return;
    case 'msA':
      node.textContent = ms(r[CompareRow.LatencyA]);
      return;
    case 'msB':
      node.textContent = ms(r[CompareRow.LatencyB]);
      return;
    case 'actions':
      node.append(button('Diff', `Diff of ${id}: both answers side by side`, { type: 'diff', traceId: id }));
      if (r[CompareRow.AnswerA] !== null) node.append(button('Submit A', `Submit A: run A's answer to ${id}`, { type: 'submit', traceId: id, side: 'a' }));
      if (r[CompareRow.AnswerB] !== null) node.append(button('Submit B', `Submit B: run B's answer to ${id}`, { type: 'submit', traceId: id, side: 'b' }));
      return;
  }
}

function button(text: string, label: string, message: CompareMessage): HTMLButtonElement {
  const b = el('button', 'text-button', text);
  b.tabIndex = -1;
  b.title = label;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', () => vscode.postMessage(message));
  return b;
}

function persist(): void {
  if (compared) vscode.setState({ ...compared, onlyDiffering, search });
}

function recompute(): void {
  const q = search.toLowerCase();
  const view = rows.filter(
    (r) =>
      (!onlyDiffering || r[CompareRow.Differs]) &&
      (!q || containsQuery(q, r[CompareRow.TraceId], r[CompareRow.Prompt], r[CompareRow.AnswerA], r[CompareRow.AnswerB])),
  );
  grid.setRows(view);
  grid.setEmpty(rows.length === 0 ? 'Neither run answered any trace.' : onlyDiffering ? 'The two runs gave the same answers.' : 'No trace matches.');
  shown.textContent = `${view.length.toLocaleString()} of ${rows.length.toLocaleString()} traces`;
}

function show(m: CompareHostMessage): void {
  rows = m.rows;
  compared = m.state;
  persist();
  title.textContent = `Compare Runs: ${m.title}`;
  subtitle.textContent = `A: ${m.a.target} (run ${m.a.runId}) · B: ${m.b.target} (run ${m.b.runId})`;
  const differing = rows.filter((r) => r[CompareRow.Differs]).length;
  summary.textContent = `${differing.toLocaleString()} of ${rows.length.toLocaleString()} answers differ.`;
  recompute();
}

function toolbar(): HTMLElement {
  const bar = el('div', 'toolbar');
  const { label, box } = toggle('Only differing', onlyDiffering);
  box.addEventListener('change', () => {
    onlyDiffering = box.checked;
    persist();
    recompute();
  });
  const input = searchBox('Search trace id, prompt or answers', search);
  onTypingPause(input, (value) => {
    search = value;
    persist();
    recompute();
  });
  bar.append(label, input, shown);
  return bar;
}

const header = el('header', 'header');
header.append(title, subtitle);
document.getElementById('app')!.append(header, summary, toolbar(), grid.element);
window.addEventListener('message', (event: MessageEvent<CompareHostMessage | null>) => {
  if (event.data?.type === 'compare') show(event.data);
});
vscode.postMessage({ type: 'ready' });
