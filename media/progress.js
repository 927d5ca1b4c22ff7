// Process Details webview. Speaks the protocol of src/extension/webviewProtocol.ts.
// Every string from the service is adversarial by design: it is only ever set as textContent.
// The table is virtualised: only the rows in view exist in the DOM, so 100,000 traces stay smooth.
(function () {
  'use strict';
  // Marks for `npm run bench`: when this script ran and when the first rows arrived, beside the paint marks.
  performance.mark('evalRunner:script');
  let firstMessageMarked = false;
  const vscode = acquireVsCodeApi();
  const ROW_HEIGHT = 26;
  const ICONS = { pending: 'circle-outline', running: 'sync', answered: 'comment', submitted: 'pass', failed: 'error', skipped: 'debug-step-over' };
  // State names and labels come from the host (src/core/traceStore.ts owns them).
  const STATES = document.getElementById('app').dataset.states.split(',');
  const LABELS = JSON.parse(document.getElementById('app').dataset.labels);

  const saved = vscode.getState() || {};
  let refId = saved.refId || '';
  let stateFilter = saved.stateFilter || 'all';
  let verdictFilter = saved.verdictFilter || 'all';
  let search = saved.search || '';
  let sortKey = saved.sortKey || 'trace';
  let sortDirection = saved.sortDirection || 1;
  let showDetails = saved.showDetails === true;
  let activeKey;
  let rows = [];
  let index = new Map();
  let view = [];
  let started = performance.now();
  let reportedRender = false;

  const el = EvalRunnerGrid.el;
  function icon(name, extra) {
    return el('span', `codicon codicon-${name}${extra ? ` ${extra}` : ''}`);
  }

  // Layout
  const app = document.getElementById('app');
  const header = el('header', 'header');
  const title = el('h1', 'title', 'Process Details');
  const subtitle = el('div', 'subtitle');
  const actions = el('div', 'actions');
  const runButton = el('button', 'button', '');
  runButton.append(icon('play'), el('span', '', ' Run'));
  const rerunButton = el('button', 'button secondary', '');
  rerunButton.append(icon('debug-rerun'), el('span', '', ' Rerun…'));
  rerunButton.title = 'Rerun traces: the failed, those marked bad or noted, or the rows shown here';
  const cancelButton = el('button', 'button secondary', '');
  cancelButton.append(icon('debug-stop'), el('span', '', ' Cancel'));
  const serviceLink = el('button', 'button secondary', '');
  serviceLink.append(icon('link-external'), el('span', '', " Service's Process Details"));
  actions.append(runButton, rerunButton, cancelButton, serviceLink);
  header.append(title, subtitle, actions);

  const summary = el('section', 'summary');
  const bar = el('div', 'bar');
  const barFill = el('div', 'bar-fill');
  bar.append(barFill);
  bar.setAttribute('role', 'progressbar');
  bar.setAttribute('aria-valuemin', '0');
  bar.setAttribute('aria-valuemax', '100');
  const percent = el('div', 'percent', '0%');
  const chips = el('div', 'chips');
  const chipNodes = {};
  for (const s of STATES) {
    const chip = el('span', `chip state-${s}`);
    chip.append(icon(ICONS[s]), el('span', 'chip-label', ` ${LABELS[s]} `), el('b', 'chip-count', '0'));
    chipNodes[s] = chip;
    chips.append(chip);
  }
  const stats = el('div', 'stats');
  const runStats = el('div', 'run-stats');
  const lastError = el('div', 'last-error');
  const notice = el('div', 'notice');
  notice.setAttribute('role', 'status');
  summary.append(percent, bar, chips, stats, runStats, lastError, notice);

  const toolbar = el('div', 'toolbar');
  const filterSelect = el('select', 'filter');
  filterSelect.setAttribute('aria-label', 'Filter by state');
  filterSelect.append(new Option('All states', 'all'));
  for (const s of STATES) filterSelect.append(new Option(LABELS[s], s));
  filterSelect.value = stateFilter;
  const verdictSelect = el('select', 'filter verdict-filter');
  verdictSelect.setAttribute('aria-label', 'Filter by verdict');
  for (const [value, text] of [['all', 'All verdicts'], ['good', 'Good'], ['bad', 'Bad'], ['none', 'Not judged']]) verdictSelect.append(new Option(text, value));
  verdictSelect.value = verdictFilter;
  const searchInput = el('input', 'search');
  searchInput.type = 'search';
  searchInput.placeholder = 'Search trace id, prompt, answer or note';
  searchInput.setAttribute('aria-label', 'Search traces');
  searchInput.value = search;
  const { label: detailsToggle, box: detailsBox } = EvalRunnerGrid.toggle('Full text', showDetails);
  const shown = el('span', 'shown');
  shown.setAttribute('aria-live', 'polite');
  toolbar.append(filterSelect, verdictSelect, searchInput, detailsToggle, shown);

  const VERDICT_ICONS = { good: 'thumbsup', bad: 'thumbsdown' };
  const COLUMNS = [
    { key: 'state', title: 'State', className: 'c-state', sortable: true },
    { key: 'trace', title: 'Trace', className: 'c-id', sortable: true },
    { key: 'prompt', title: 'Prompt', className: 'c-prompt' },
    { key: 'answer', title: 'Answer', className: 'c-answer' },
    { key: 'latency', title: 'Latency', className: 'c-ms', sortable: true },
    { key: 'verdict', title: 'Verdict', className: 'c-verdict', sortable: true },
    { key: 'error', title: 'Error', className: 'c-error' },
  ];
  function actionButton(name, label, message, pressed) {
    const button = el('button', `icon-button${pressed ? ' pressed' : ''}`);
    button.append(icon(name));
    button.tabIndex = -1;
    button.title = label;
    button.setAttribute('aria-label', label);
    button.setAttribute('aria-pressed', pressed ? 'true' : 'false');
    button.addEventListener('click', () => vscode.postMessage(message));
    return button;
  }
  const grid = EvalRunnerGrid.createGrid({
    label: 'Traces',
    columns: COLUMNS,
    rowHeight: ROW_HEIGHT,
    empty: 'No traces yet: run the evaluation or fetch its prompts.',
    keyOf: (r) => r[0],
    rowClass: (r) => `state-${r[1]}${r[6] ? ` verdict-${r[6]}` : ''}`,
    rowLabel: (r) =>
      [r[0], LABELS[r[1]], r[4] === null ? '' : `${r[4]} ms`, r[6] ? `rated ${r[6]}` : '', r[5] ? `error: ${r[5]}` : ''].filter(Boolean).join(', '),
    cell(r, column, node) {
      switch (column.key) {
        case 'state':
          node.append(icon(ICONS[r[1]], r[1] === 'running' ? 'codicon-modifier-spin' : ''), el('span', '', ` ${LABELS[r[1]]}`));
          break;
        case 'trace':
          node.textContent = r[0];
          node.title = r[0];
          break;
        case 'prompt':
          node.textContent = r[2];
          break;
        case 'answer':
          node.textContent = r[3];
          break;
        case 'latency':
          node.textContent = r[4] === null ? '' : `${r[4]} ms`;
          break;
        case 'verdict':
          if (r[3] === '' && !r[6]) break;
          node.append(
            actionButton(r[6] === 'good' ? 'thumbsup-filled' : 'thumbsup', `Mark ${r[0]} good`, { type: 'verdict', traceId: r[0], rating: r[6] === 'good' ? null : 'good' }, r[6] === 'good'),
            actionButton(r[6] === 'bad' ? 'thumbsdown-filled' : 'thumbsdown', `Mark ${r[0]} bad`, { type: 'verdict', traceId: r[0], rating: r[6] === 'bad' ? null : 'bad' }, r[6] === 'bad'),
            actionButton(r[7] ? 'note' : 'comment', r[7] ? `Note: ${r[7]}` : `Add a note to ${r[0]}`, { type: 'note', traceId: r[0] }, !!r[7]),
          );
          break;
        case 'error':
          node.textContent = r[5] || '';
          break;
      }
    },
    onOpen: (r) => vscode.postMessage({ type: 'openTrace', traceId: r[0] }),
    onActive: (r) => {
      activeKey = r[0];
      if (showDetails) requestDetails();
    },
    onSort: (key) => {
      sortDirection = sortKey === key ? -sortDirection : 1;
      sortKey = key;
      persist();
      recompute();
    },
    // Keys on the active row: g good, b bad, n note (the grid owns arrows, Page Up/Down, Home/End and Enter).
    onKey(e, r) {
      if (e.ctrlKey || e.metaKey || e.altKey) return false;
      if (e.key === 'g' || e.key === 'b') {
        const rating = e.key === 'g' ? 'good' : 'bad';
        vscode.postMessage({ type: 'verdict', traceId: r[0], rating: r[6] === rating ? null : rating });
        return true;
      }
      if (e.key === 'n') {
        vscode.postMessage({ type: 'note', traceId: r[0] });
        return true;
      }
      return false;
    },
  });
  const details = el('section', 'details');
  details.setAttribute('aria-label', 'Full prompt and answer of the active trace');
  details.setAttribute('aria-live', 'polite');
  const detailsTitle = el('h2', 'details-title');
  const detailsPrompt = el('pre', 'details-text');
  const detailsAnswer = el('pre', 'details-text');
  const detailsNote = el('div', 'details-note');
  details.append(detailsTitle, el('h3', '', 'Prompt'), detailsPrompt, el('h3', '', 'Answer'), detailsAnswer, detailsNote);
  details.hidden = !showDetails;
  document.body.classList.toggle('with-details', showDetails);
  app.append(header, summary, toolbar, grid.element, details);

  function persist() {
    vscode.setState({ refId, stateFilter, verdictFilter, search, sortKey, sortDirection, showDetails });
  }

  function matches(r) {
    if (stateFilter !== 'all' && r[1] !== stateFilter) return false;
    if (verdictFilter !== 'all' && (r[6] || 'none') !== verdictFilter) return false;
    if (!search) return true;
    const q = search.toLowerCase();
    return r[0].toLowerCase().includes(q) || r[2].toLowerCase().includes(q) || r[3].toLowerCase().includes(q) || (!!r[7] && r[7].toLowerCase().includes(q));
  }

  const STATE_ORDER = new Map(STATES.map((s, i) => [s, i]));
  const VERDICT_ORDER = { good: 0, bad: 1 };
  function comparator() {
    const d = sortDirection;
    switch (sortKey) {
      case 'state':
        return (a, b) => d * (STATE_ORDER.get(a[1]) - STATE_ORDER.get(b[1]));
      case 'latency':
        // Traces without a latency last, whichever the direction.
        return (a, b) => (a[4] === null ? (b[4] === null ? 0 : 1) : b[4] === null ? -1 : d * (a[4] - b[4]));
      case 'verdict':
        return (a, b) => d * ((VERDICT_ORDER[a[6]] ?? 2) - (VERDICT_ORDER[b[6]] ?? 2));
      case 'trace':
        return d > 0 ? null : 'reverse';
      default:
        return null;
    }
  }

  /** Where each shown trace sits in the view (trace id → index), for updates in place. */
  let viewPos;
  function positions() {
    if (!viewPos) {
      viewPos = new Map();
      for (let i = 0; i < view.length; i++) viewPos.set(view[i][0], i);
    }
    return viewPos;
  }
  function recompute() {
    view = [];
    for (let i = 0; i < rows.length; i++) if (matches(rows[i])) view.push(rows[i]);
    const compare = comparator();
    if (compare === 'reverse') view.reverse();
    else if (compare) view.sort(compare); // stable: ties keep the service's list order
    viewPos = undefined; // built on the first update that needs it: a filter or a search never pays for it
    grid.setSort(sortKey, sortDirection);
    grid.setRows(view);
    shown.textContent = `${view.length.toLocaleString()} of ${rows.length.toLocaleString()} traces`;
    grid.setEmpty(rows.length ? 'No trace matches the filters.' : 'No traces yet: run the evaluation or fetch its prompts.');
  }

  /** Runs fn once the next frame has been painted (a task queued from rAF runs after that paint). */
  function afterPaint(fn) {
    requestAnimationFrame(() => setTimeout(fn, 0));
  }

  let detailsTimer = 0;
  function requestDetails() {
    clearTimeout(detailsTimer);
    detailsTimer = setTimeout(() => {
      if (activeKey !== undefined) vscode.postMessage({ type: 'details', traceId: activeKey });
    }, 80);
  }
  detailsBox.addEventListener('change', () => {
    showDetails = detailsBox.checked;
    details.hidden = !showDetails;
    document.body.classList.toggle('with-details', showDetails);
    persist();
    if (showDetails) requestDetails();
  });

  let searchTimer = 0;
  searchInput.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      const t0 = performance.now();
      search = searchInput.value;
      persist();
      recompute();
      afterPaint(() => performance.measure('evalRunner:search', { start: t0, detail: { shown: view.length } }));
    }, 120);
  });
  filterSelect.addEventListener('change', () => {
    const t0 = performance.now();
    stateFilter = filterSelect.value;
    persist();
    recompute();
    afterPaint(() => performance.measure('evalRunner:filter', { start: t0, detail: { shown: view.length } }));
  });
  verdictSelect.addEventListener('change', () => {
    verdictFilter = verdictSelect.value;
    persist();
    recompute();
  });
  runButton.addEventListener('click', () => vscode.postMessage({ type: 'run' }));
  cancelButton.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
  // The rows a filter or a search narrowed the table to are a choice of traces too (all rows: no choice).
  rerunButton.addEventListener('click', () =>
    vscode.postMessage({ type: 'rerun', shown: view.length < rows.length ? view.slice(0, 50000).map((r) => r[0]) : null }),
  );
  serviceLink.addEventListener('click', () => vscode.postMessage({ type: 'openProcessDetails' }));

  function progress(m) {
    const done = m.counts.submitted + m.counts.failed + m.counts.skipped;
    const pct = m.total ? Math.floor((100 * m.counts.submitted) / m.total) : 0;
    percent.textContent = `${pct}% submitted`;
    barFill.style.width = `${m.total ? (100 * done) / m.total : 0}%`;
    bar.setAttribute('aria-valuenow', String(pct));
    for (const s of STATES) chipNodes[s].querySelector('.chip-count').textContent = String(m.counts[s].toLocaleString());
    const parts = [`${m.counts.submitted.toLocaleString()} / ${m.total.toLocaleString()} submitted`];
    if (m.running) parts.push(`${m.ratePerSecond.toFixed(1)} traces/s`, m.etaSeconds === null ? 'ETA –' : `ETA ${Math.ceil(m.etaSeconds)} s`);
    if (m.waiting) parts.push(m.waiting);
    stats.textContent = parts.join(' · ');
    runStats.textContent = m.run ? `Run ${m.run.runId} · ${m.run.target}${m.run.stats ? ` · ${m.run.stats}` : ''}` : '';
    lastError.textContent = m.lastError ? `Last error: ${m.lastError}` : '';
    notice.textContent = m.notice || '';
    runButton.hidden = m.running;
    rerunButton.hidden = m.running;
    cancelButton.hidden = !m.running;
    document.body.dataset.complete = m.total > 0 && m.counts.submitted === m.total ? 'true' : 'false';
  }

  window.addEventListener('message', (event) => {
    const m = event.data;
    if (!m || typeof m.type !== 'string') return;
    if (m.type === 'init') {
      refId = m.refId;
      title.textContent = `Process Details: ${m.title}`;
      subtitle.textContent = `${m.kind} evaluation ${m.evaluationId} · ${m.baseUrl}`;
      serviceLink.title = m.processDetailsUrl;
      persist();
    } else if (m.type === 'rows') {
      if (!firstMessageMarked) {
        firstMessageMarked = true;
        performance.mark('evalRunner:firstMessage');
      }
      if (m.reset) {
        rows = [];
        index = new Map();
        started = performance.now();
      }
      for (const r of m.rows) {
        index.set(r[0], rows.length);
        rows.push(r);
      }
      if (m.reset && !m.done && !reportedRender) {
        // The first chunk is what the user sees first: paint it now, the rest streams in behind it.
        recompute();
        afterPaint(() => performance.mark('evalRunner:firstRows', { detail: { rows: rows.length } }));
      } else if (!m.done) shown.textContent = `loading… ${rows.length.toLocaleString()} traces`;
      if (m.done) {
        recompute();
        if (!reportedRender && rows.length) {
          reportedRender = true;
          // Marks for `npm run bench` (read in the browser): painted = since this document started.
          afterPaint(() => {
            performance.mark('evalRunner:painted', { detail: { rows: rows.length } });
            vscode.postMessage({ type: 'rendered', rows: rows.length, ms: performance.now() - started });
          });
        }
      }
    } else if (m.type === 'update') {
      let reorder = sortKey !== 'trace';
      for (const r of m.rows) {
        const i = index.get(r[0]);
        if (i === undefined) continue;
        if (matches(rows[i]) !== matches(r)) reorder = true;
        rows[i] = r;
        if (reorder) continue; // the view is rebuilt below
        const v = positions().get(r[0]);
        if (v !== undefined) view[v] = r;
      }
      // Rows change in place when neither the filters nor the order move them: the grid repaints the nodes in
      // view and the active row, focus and scroll position stay where they are.
      if (reorder) recompute();
      else grid.changed();
      if (showDetails && m.rows.some((r) => r[0] === activeKey)) requestDetails();
    } else if (m.type === 'details') {
      if (m.traceId !== activeKey) return;
      detailsTitle.textContent = m.traceId;
      detailsPrompt.textContent = m.prompt;
      detailsAnswer.textContent = m.answer === null ? '(no answer yet)' : m.answer;
      detailsNote.textContent = m.note ? `Note: ${m.note}` : '';
    } else if (m.type === 'progress') {
      progress(m);
    }
  });

  vscode.postMessage({ type: 'ready' });
})();
