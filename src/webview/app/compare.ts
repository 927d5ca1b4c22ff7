// The Compare Runs webview. Speaks the compare messages of src/webview/protocol.ts and saves CompareState, which
// its restorer reads after a reload: which evaluation and runs, the traces it was narrowed to, and the filters.
// The host holds the rows and applies the filters; the page shows the window of rows it asked for (tableWindow.ts).
// Prompts and answers are adversarial text: only ever set as textContent (through the shared grid).
import { CompareRow } from '../protocol';
import type { CompareHeader, CompareHostMessage, CompareMessage, CompareState, ComparedRuns, CompareTuple, CompareViewMessage } from '../protocol';
import { afterPaint, el, onTypingPause, searchBox, setText, toggle } from './dom';
import { createGrid } from './grid';
import type { Column } from './grid';
import { TableWindow } from './tableWindow';
import { vscodeApi } from './vscodeApi';

// Marks for `npm run bench`: when this script ran and when the first rows were painted.
performance.mark('evalRunner:compareScript');

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
let activeKey: string | undefined;
let compareHeader: CompareHeader | undefined;
let painted = false;
const table = new TableWindow<CompareTuple>(
  (start, end) => vscode.postMessage({ type: 'query', filters: { onlyDiffering, search }, activeKey: activeKey ?? null, start, end }),
  (r) => r[CompareRow.TraceId],
);
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
  empty: 'Reading the two runs…',
  keyOf: (r) => r[CompareRow.TraceId],
  rowClass: (r) => (r[CompareRow.Differs] ? 'differs' : 'same'),
  rowLabel: (r) => `${r[CompareRow.TraceId]}, ${r[CompareRow.Differs] ? 'answers differ' : 'same answer'}${verdictWords(r)}`,
  cell: fillCell,
  onOpen: (r) => vscode.postMessage({ type: 'diff', traceId: r[CompareRow.TraceId] }),
  onActive: (r) => (activeKey = r[CompareRow.TraceId]),
  onNeed: (first, last) => table.need(first, last),
  // a / b on the active row submit that run's answer; v carries its verdict over (Enter opens the diff).
  onKey(e, r) {
    if (e.ctrlKey || e.metaKey || e.altKey) return false;
    const from = carryFrom(r);
    if (e.key === 'v' && from) vscode.postMessage({ type: 'carryVerdict', traceId: r[CompareRow.TraceId], from });
    else if (e.key === 'a' || e.key === 'b') vscode.postMessage({ type: 'submit', traceId: r[CompareRow.TraceId], side: e.key });
    else return false;
    return true;
  },
});

const VERDICT_WORDS = { good: 'Good', bad: 'Bad' } as const;

/** The side whose verdict can go to the other: the same answer, judged on one side only. */
function carryFrom(r: CompareTuple): 'a' | 'b' | undefined {
  const a = r[CompareRow.VerdictA];
  const b = r[CompareRow.VerdictB];
  if (r[CompareRow.Differs] || r[CompareRow.AnswerA] === null || r[CompareRow.AnswerB] === null || a === b) return undefined;
  return a && !b ? 'a' : b && !a ? 'b' : undefined;
}

function verdictWords(r: CompareTuple): string {
  const a = r[CompareRow.VerdictA];
  const b = r[CompareRow.VerdictB];
  return `${a ? `, A judged ${VERDICT_WORDS[a]}` : ''}${b ? `, B judged ${VERDICT_WORDS[b]}` : ''}`;
}

/** An answer cell: the run's verdict on it first, then the text. */
function answerCell(node: HTMLElement, answer: string | null, verdict: CompareTuple[CompareRow.VerdictA]): void {
  if (verdict) node.append(el('span', `verdict-badge verdict-${verdict}`, VERDICT_WORDS[verdict]), ' ');
  node.append(answer ?? '(no answer)');
}

function fillCell(r: CompareTuple, column: Column<ColumnKey>, node: HTMLElement): void {
  const ms = (v: number | null) => (v === null ? '' : `${v} ms`);
  const id = r[CompareRow.TraceId];
  switch (column.key) {
    case 'trace':
      node.textContent = id;
      node.title = r[CompareRow.Prompt];
      return;
    case 'a':
      answerCell(node, r[CompareRow.AnswerA], r[CompareRow.VerdictA]);
      return;
    case 'b':
      answerCell(node, r[CompareRow.AnswerB], r[CompareRow.VerdictB]);
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
      if (carryFrom(r)) {
        const [from, to] = carryFrom(r) === 'a' ? ['A', 'B'] : ['B', 'A'];
        node.append(button(`Verdict ${from}→${to}`, `Carry run ${from}'s verdict on ${id} over to run ${to}, whose answer is the same (V)`, { type: 'carryVerdict', traceId: id, from: carryFrom(r)! }));
      }
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

/** Asks the host for the rows in view under the page's filters. */
function refilter(): void {
  persist();
  const { first, last } = grid.visibleRange();
  table.query(first, Math.max(last, first + 1));
}

function emptyText(): string {
  if (compareHeader?.total === 0) return 'Neither run answered any trace.';
  return search ? 'No trace matches.' : onlyDiffering ? 'The two runs gave the same answers.' : 'No trace matches.';
}

/** Which runs and how many traces: the rows come apart, as the page asks for them. */
function showHeader(m: CompareHeader): void {
  compareHeader = m;
  compared = m.state;
  persist();
  title.textContent = `Compare Runs: ${m.title}`;
  subtitle.textContent = `A: ${m.a.target} (run ${m.a.runId}) · B: ${m.b.target} (run ${m.b.runId})`;
  // Each run's cost, or why it has none, beside the counts.
  summary.textContent = `${m.differing.toLocaleString()} of ${m.total.toLocaleString()} answers differ. Cost: A ${m.a.cost} · B ${m.b.cost}.`;
  grid.setEmpty(emptyText());
}

/** The host's window of the rows the filters leave. */
function showView(m: CompareViewMessage): void {
  const active = table.receive(m, grid, activeKey);
  grid.setSource(table, active);
  grid.setEmpty(emptyText());
  // Set only when it changed: each view (every scroll of the table) would otherwise rewrite it and lay the toolbar out.
  setText(shown, `${m.length.toLocaleString()} of ${m.total.toLocaleString()} traces`);
  if (!painted) {
    painted = true;
    afterPaint(() => performance.mark('evalRunner:compareRows', { detail: { rows: m.rows.length, length: m.length, total: m.total } }));
  }
}

function toolbar(): HTMLElement {
  const bar = el('div', 'toolbar');
  const { label, box } = toggle('Only differing', onlyDiffering);
  box.addEventListener('change', () => {
    onlyDiffering = box.checked;
    refilter();
  });
  const input = searchBox('Search trace id, prompt or answers', search);
  onTypingPause(input, (value) => {
    search = value;
    refilter();
  });
  bar.append(label, input, shown);
  return bar;
}

const header = el('header', 'header');
header.append(title, subtitle);
document.getElementById('app')!.append(header, summary, toolbar(), grid.element);
window.addEventListener('message', (event: MessageEvent<CompareHostMessage | null>) => {
  if (event.data?.type === 'compare') showHeader(event.data);
  else if (event.data?.type === 'view') showView(event.data);
});
vscode.postMessage({ type: 'ready' });
// The first rows, as many as a tall window shows, under the filters the page was left with.
table.query(0, 100);
