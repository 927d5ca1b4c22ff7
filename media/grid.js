// A virtualised, accessible grid shared by the Process Details and Compare Runs webviews.
// Only the rows in view exist in the DOM, and those nodes are reused as rows scroll or update, so 100,000 rows
// stay smooth. The grid element itself holds keyboard focus and names the active row with
// aria-activedescendant: rows can be rebuilt under a running evaluation without focus or selection moving.
// Every cell is text (textContent) or a node the caller built: nothing is ever parsed as HTML.
(function () {
  'use strict';
  const OVERSCAN = 8;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /**
   * options: {
   *   label: the grid's accessible name,
   *   columns: [{ key, title, className, sortable }],
   *   keyOf(row): a row's stable key,
   *   rowLabel(row): the row's accessible name,
   *   rowClass(row): extra classes for the row,
   *   cell(row, column, node): fills one cell node (text, or nodes),
   *   onOpen(row), onActive(row), onSort(key), onKey(event, row) returning true when it handled the key,
   *   rowHeight (default 26), empty: the text shown when there are no rows at all
   * }
   */
  function createGrid(options) {
    const rowHeight = options.rowHeight || 26;
    const root = el('div', 'table');
    root.setAttribute('role', 'grid');
    root.setAttribute('aria-label', options.label);
    root.tabIndex = 0;
    const head = el('div', 'row head');
    head.setAttribute('role', 'row');
    head.setAttribute('aria-rowindex', '1');
    const headers = new Map();
    for (const column of options.columns) {
      const cell = el('div', `cell ${column.className}`);
      cell.setAttribute('role', 'columnheader');
      if (column.sortable) {
        const button = el('button', 'sort', column.title);
        button.tabIndex = -1;
        button.addEventListener('click', () => options.onSort && options.onSort(column.key));
        cell.append(button);
      } else cell.textContent = column.title;
      headers.set(column.key, cell);
      head.append(cell);
    }
    const viewport = el('div', 'viewport');
    const spacer = el('div', 'spacer');
    const body = el('div', 'body');
    body.setAttribute('role', 'rowgroup');
    viewport.append(spacer, body);
    const empty = el('div', 'empty', options.empty || 'Nothing to show.');
    root.append(head, viewport, empty);

    let rows = [];
    let active = -1;
    const pool = [];
    let frame = 0;
    let nextId = 0;

    function rowNode() {
      const line = el('div', 'row');
      line.setAttribute('role', 'row');
      line.id = `grid-row-${nextId++}`;
      for (const column of options.columns) {
        const cell = el('div', `cell ${column.className}`);
        cell.setAttribute('role', 'gridcell');
        line.append(cell);
      }
      line.addEventListener('click', (e) => {
        if (line.__index === undefined) return;
        setActive(line.__index, false);
        if (!e.target.closest('button')) options.onOpen && options.onOpen(rows[line.__index]);
      });
      return line;
    }

    function fill(line, row, index) {
      line.__index = index;
      line.style.transform = `translateY(${index * rowHeight}px)`;
      line.setAttribute('aria-rowindex', String(index + 2));
      line.setAttribute('aria-selected', index === active ? 'true' : 'false');
      line.classList.toggle('active', index === active);
      if (line.__row === row) return;
      line.__row = row;
      line.className = `row ${options.rowClass ? options.rowClass(row) : ''}${index === active ? ' active' : ''}`;
      line.setAttribute('aria-label', options.rowLabel(row));
      line.dataset.key = options.keyOf(row);
      options.columns.forEach((column, i) => {
        const cell = line.children[i];
        cell.replaceChildren();
        options.cell(row, column, cell);
      });
    }

    function render() {
      frame = 0;
      const top = viewport.scrollTop;
      const height = viewport.clientHeight || 600;
      const first = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
      const last = Math.min(rows.length, Math.ceil((top + height) / rowHeight) + OVERSCAN);
      const needed = Math.max(0, last - first);
      while (pool.length < needed) pool.push(rowNode());
      for (let k = 0; k < pool.length; k++) {
        const line = pool[k];
        if (k < needed) {
          fill(line, rows[first + k], first + k);
          if (!line.isConnected) body.append(line);
        } else if (line.isConnected) {
          line.remove();
          line.__index = undefined;
          line.__row = undefined;
        }
      }
      const activeLine = pool.find((l) => l.isConnected && l.__index === active);
      if (activeLine) root.setAttribute('aria-activedescendant', activeLine.id);
      else root.removeAttribute('aria-activedescendant');
    }

    function renderSoon() {
      if (!frame) frame = requestAnimationFrame(render);
    }

    function scrollIntoView(index) {
      const top = index * rowHeight;
      if (top < viewport.scrollTop) viewport.scrollTop = top;
      else if (top + rowHeight > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = top + rowHeight - viewport.clientHeight;
    }

    function setActive(index, scroll = true) {
      if (rows.length === 0) return;
      active = Math.max(0, Math.min(rows.length - 1, index));
      if (scroll) scrollIntoView(active);
      render();
      options.onActive && options.onActive(rows[active]);
    }

    const pageSize = () => Math.max(1, Math.floor((viewport.clientHeight || 600) / rowHeight) - 1);
    root.addEventListener('keydown', (e) => {
      const row = active >= 0 ? rows[active] : undefined;
      if (row && options.onKey && options.onKey(e, row)) {
        e.preventDefault();
        return;
      }
      const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: pageSize(), PageUp: -pageSize(), Home: -Infinity, End: Infinity };
      if (e.key in moves) {
        const step = moves[e.key];
        const from = active < 0 ? (step > 0 ? -1 : rows.length) : active;
        setActive(step === -Infinity ? 0 : step === Infinity ? rows.length - 1 : from + step);
        e.preventDefault();
      } else if (e.key === 'Enter' && row) {
        options.onOpen && options.onOpen(row);
        e.preventDefault();
      }
    });
    root.addEventListener('focus', () => {
      if (active < 0 && rows.length) setActive(Math.floor(viewport.scrollTop / rowHeight));
    });
    viewport.addEventListener('scroll', renderSoon, { passive: true });
    window.addEventListener('resize', renderSoon);

    return {
      element: root,
      viewport,
      /** Replaces the rows; the active row is kept by key wherever it moved (or cleared when it is gone). */
      setRows(next) {
        const key = active >= 0 && rows[active] ? options.keyOf(rows[active]) : undefined;
        rows = next;
        active = key === undefined ? -1 : rows.findIndex((r) => options.keyOf(r) === key);
        spacer.style.height = `${rows.length * rowHeight}px`;
        empty.hidden = rows.length > 0;
        render();
      },
      /** Rows whose content changed in place (same positions): repainted on the next frame. */
      changed() {
        renderSoon();
      },
      setSort(key, direction) {
        for (const [k, cell] of headers) cell.setAttribute('aria-sort', k === key ? (direction > 0 ? 'ascending' : 'descending') : 'none');
      },
      setEmpty(text) {
        empty.textContent = text;
      },
      get activeRow() {
        return active >= 0 ? rows[active] : undefined;
      },
      get size() {
        return rows.length;
      },
    };
  }

  /** A labelled checkbox for a toolbar: { label (the element to place), box (the input) }. */
  function toggle(text, checked) {
    const label = el('label', 'toggle');
    const box = el('input');
    box.type = 'checkbox';
    box.checked = checked;
    label.append(box, el('span', '', ` ${text}`));
    return { label, box };
  }

  window.EvalRunnerGrid = { createGrid, el, toggle };
})();
