// Compare Runs webview. Speaks the compare messages of src/extension/webviewProtocol.ts.
// Prompts and answers are adversarial text: only ever set as textContent (through the shared grid).
(function () {
  'use strict';
  const vscode = acquireVsCodeApi();
  const { createGrid, el } = EvalRunnerGrid;
  const saved = vscode.getState() || {};
  let onlyDiffering = saved.onlyDiffering !== false;
  let search = '';
  let rows = [];
  let runs = { a: undefined, b: undefined };
  let state = saved.state;

  const app = document.getElementById('app');
  const header = el('header', 'header');
  const title = el('h1', 'title', 'Compare Runs');
  const subtitle = el('div', 'subtitle');
  header.append(title, subtitle);
  const summary = el('div', 'stats');
  summary.setAttribute('aria-live', 'polite');

  const toolbar = el('div', 'toolbar');
  const { label: differingToggle, box: differingBox } = EvalRunnerGrid.toggle('Only differing', onlyDiffering);
  const searchInput = el('input', 'search');
  searchInput.type = 'search';
  searchInput.placeholder = 'Search trace id, prompt or answers';
  searchInput.setAttribute('aria-label', 'Search traces');
  const shown = el('span', 'shown');
  toolbar.append(differingToggle, searchInput, shown);

  function button(text, label, message) {
    const b = el('button', 'text-button', text);
    b.tabIndex = -1;
    b.title = label;
    b.setAttribute('aria-label', label);
    b.addEventListener('click', () => vscode.postMessage(message));
    return b;
  }

  const grid = createGrid({
    label: 'Answers of the two runs',
    columns: [
      { key: 'trace', title: 'Trace', className: 'c-id' },
      { key: 'a', title: 'Run A', className: 'c-answer c-a' },
      { key: 'b', title: 'Run B', className: 'c-answer c-b' },
      { key: 'msA', title: 'A latency', className: 'c-ms' },
      { key: 'msB', title: 'B latency', className: 'c-ms' },
      { key: 'actions', title: 'Actions', className: 'c-actions' },
    ],
    empty: 'No traces to compare.',
    keyOf: (r) => r[0],
    rowClass: (r) => (r[6] ? 'differs' : 'same'),
    rowLabel: (r) => `${r[0]}, ${r[6] ? 'answers differ' : 'same answer'}`,
    cell(r, column, node) {
      const ms = (v) => (v === null ? '' : `${v} ms`);
      switch (column.key) {
        case 'trace':
          node.textContent = r[0];
          node.title = r[1];
          break;
        case 'a':
          node.textContent = r[2] === null ? '(no answer)' : r[2];
          break;
        case 'b':
          node.textContent = r[3] === null ? '(no answer)' : r[3];
          break;
        case 'msA':
          node.textContent = ms(r[4]);
          break;
        case 'msB':
          node.textContent = ms(r[5]);
          break;
        case 'actions':
          node.append(
            button('Diff', `Open the diff of ${r[0]}`, { type: 'diff', traceId: r[0] }),
            ...(r[2] === null ? [] : [button('Submit A', `Submit run A's answer to ${r[0]}`, { type: 'submit', traceId: r[0], side: 'a' })]),
            ...(r[3] === null ? [] : [button('Submit B', `Submit run B's answer to ${r[0]}`, { type: 'submit', traceId: r[0], side: 'b' })]),
          );
          break;
      }
    },
    onOpen: (r) => vscode.postMessage({ type: 'diff', traceId: r[0] }),
    // a / b on the active row submit that run's answer (Enter opens the diff).
    onKey(e, r) {
      if (e.ctrlKey || e.metaKey || e.altKey || (e.key !== 'a' && e.key !== 'b')) return false;
      vscode.postMessage({ type: 'submit', traceId: r[0], side: e.key });
      return true;
    },
  });
  app.append(header, summary, toolbar, grid.element);

  function persist() {
    vscode.setState({ onlyDiffering, state });
  }

  function recompute() {
    const q = search.toLowerCase();
    const view = rows.filter(
      (r) =>
        (!onlyDiffering || r[6]) &&
        (!q || r[0].toLowerCase().includes(q) || r[1].toLowerCase().includes(q) || (r[2] || '').toLowerCase().includes(q) || (r[3] || '').toLowerCase().includes(q)),
    );
    grid.setRows(view);
    grid.setEmpty(rows.length === 0 ? 'Neither run answered any trace.' : onlyDiffering ? 'The two runs gave the same answers.' : 'No trace matches.');
    shown.textContent = `${view.length.toLocaleString()} of ${rows.length.toLocaleString()} traces`;
  }

  differingBox.addEventListener('change', () => {
    onlyDiffering = differingBox.checked;
    persist();
    recompute();
  });
  let timer = 0;
  searchInput.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      search = searchInput.value;
      recompute();
    }, 120);
  });

  window.addEventListener('message', (event) => {
    const m = event.data;
    if (!m || m.type !== 'compare') return;
    rows = m.rows;
    runs = { a: m.a, b: m.b };
    state = m.state;
    persist();
    title.textContent = `Compare Runs: ${m.title}`;
    subtitle.textContent = `A: ${runs.a.target} (run ${runs.a.runId}) · B: ${runs.b.target} (run ${runs.b.runId})`;
    const differing = rows.filter((r) => r[6]).length;
    summary.textContent = `${differing.toLocaleString()} of ${rows.length.toLocaleString()} answers differ.`;
    recompute();
  });

  vscode.postMessage({ type: 'ready' });
})();
