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
  const OVERSCAN = 10;
  const ICONS = { pending: 'circle-outline', running: 'sync', answered: 'comment', submitted: 'pass', failed: 'error', skipped: 'debug-step-over' };
  // State names and labels come from the host (src/core/traceStore.ts owns them).
  const STATES = document.getElementById('app').dataset.states.split(',');
  const LABELS = JSON.parse(document.getElementById('app').dataset.labels);

  const saved = vscode.getState() || {};
  let refId = saved.refId || '';
  let stateFilter = saved.stateFilter || 'all';
  let search = saved.search || '';
  let rows = [];
  let index = new Map();
  let view = [];
  let started = performance.now();
  let reportedRender = false;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
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
  const cancelButton = el('button', 'button secondary', '');
  cancelButton.append(icon('debug-stop'), el('span', '', ' Cancel'));
  const serviceLink = el('button', 'button secondary', '');
  serviceLink.append(icon('link-external'), el('span', '', " Service's Process Details"));
  actions.append(runButton, cancelButton, serviceLink);
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
  const lastError = el('div', 'last-error');
  summary.append(percent, bar, chips, stats, lastError);

  const toolbar = el('div', 'toolbar');
  const filterSelect = el('select', 'filter');
  filterSelect.setAttribute('aria-label', 'Filter by state');
  filterSelect.append(new Option('All states', 'all'));
  for (const s of STATES) filterSelect.append(new Option(LABELS[s], s));
  filterSelect.value = stateFilter;
  const searchInput = el('input', 'search');
  searchInput.type = 'search';
  searchInput.placeholder = 'Search trace id, prompt or answer';
  searchInput.setAttribute('aria-label', 'Search traces');
  searchInput.value = search;
  const shown = el('span', 'shown');
  toolbar.append(filterSelect, searchInput, shown);

  const table = el('div', 'table');
  table.setAttribute('role', 'grid');
  const head = el('div', 'row head');
  head.setAttribute('role', 'row');
  for (const [cls, text] of [['c-state', 'State'], ['c-id', 'Trace'], ['c-prompt', 'Prompt'], ['c-answer', 'Answer'], ['c-ms', 'Latency'], ['c-error', 'Error']]) {
    const cell = el('div', `cell ${cls}`, text);
    cell.setAttribute('role', 'columnheader');
    head.append(cell);
  }
  const viewport = el('div', 'viewport');
  viewport.tabIndex = 0;
  const spacer = el('div', 'spacer');
  const body = el('div', 'body');
  viewport.append(spacer, body);
  const empty = el('div', 'empty', 'No traces yet: run the evaluation or fetch its prompts.');
  table.append(head, viewport, empty);
  app.append(header, summary, toolbar, table);

  function persist() {
    vscode.setState({ refId, stateFilter, search });
  }

  function matches(r) {
    if (stateFilter !== 'all' && r[1] !== stateFilter) return false;
    if (!search) return true;
    const q = search.toLowerCase();
    return r[0].toLowerCase().includes(q) || r[2].toLowerCase().includes(q) || r[3].toLowerCase().includes(q);
  }

  function recompute() {
    view = [];
    for (let i = 0; i < rows.length; i++) if (matches(rows[i])) view.push(i);
    spacer.style.height = `${view.length * ROW_HEIGHT}px`;
    shown.textContent = `${view.length.toLocaleString()} of ${rows.length.toLocaleString()} traces`;
    empty.hidden = rows.length > 0;
    render();
  }

  /** Runs fn once the next frame has been painted (a task queued from rAF runs after that paint). */
  function afterPaint(fn) {
    requestAnimationFrame(() => setTimeout(fn, 0));
  }

  let frame = 0;
  function render() {
    frame = 0;
    const top = viewport.scrollTop;
    const height = viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(view.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const fragment = document.createDocumentFragment();
    for (let v = first; v < last; v++) {
      const r = rows[view[v]];
      const line = el('div', `row state-${r[1]}`);
      line.setAttribute('role', 'row');
      line.style.transform = `translateY(${v * ROW_HEIGHT}px)`;
      line.dataset.traceId = r[0];
      line.tabIndex = -1;
      const state = el('div', 'cell c-state');
      state.append(icon(ICONS[r[1]], r[1] === 'running' ? 'codicon-modifier-spin' : ''), el('span', '', ` ${LABELS[r[1]]}`));
      line.append(
        state,
        el('div', 'cell c-id', r[0]),
        el('div', 'cell c-prompt', r[2]),
        el('div', 'cell c-answer', r[3]),
        el('div', 'cell c-ms', r[4] === null ? '' : `${r[4]} ms`),
        el('div', 'cell c-error', r[5] || ''),
      );
      line.title = r[5] ? `${r[0]}: ${r[5]}` : r[0];
      fragment.append(line);
    }
    body.replaceChildren(fragment);
  }
  function renderSoon() {
    if (!frame) frame = requestAnimationFrame(render);
  }

  viewport.addEventListener('scroll', renderSoon, { passive: true });
  window.addEventListener('resize', renderSoon);
  body.addEventListener('click', (e) => {
    const line = e.target.closest('.row');
    if (line) vscode.postMessage({ type: 'openTrace', traceId: line.dataset.traceId });
  });
  viewport.addEventListener('keydown', (e) => {
    const current = document.activeElement && document.activeElement.closest ? document.activeElement.closest('.row') : null;
    if (e.key === 'Enter' && current) vscode.postMessage({ type: 'openTrace', traceId: current.dataset.traceId });
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const lines = [...body.children];
      const at = current ? lines.indexOf(current) : -1;
      const next = lines[Math.max(0, Math.min(lines.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))];
      if (next) {
        next.focus();
        e.preventDefault();
      }
    }
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
  runButton.addEventListener('click', () => vscode.postMessage({ type: 'run' }));
  cancelButton.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
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
    lastError.textContent = m.lastError ? `Last error: ${m.lastError}` : '';
    runButton.hidden = m.running;
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
      let membership = false;
      for (const r of m.rows) {
        const i = index.get(r[0]);
        if (i === undefined) continue;
        if (matches(rows[i]) !== matches(r)) membership = true;
        rows[i] = r;
      }
      if (membership) recompute();
      else renderSoon();
    } else if (m.type === 'progress') {
      progress(m);
    }
  });

  vscode.postMessage({ type: 'ready' });
})();
