// A virtualised, accessible grid shared by the Run Details and Compare Runs webviews.
// Only the rows in view exist in the DOM, and those nodes are reused as rows scroll or update, so 100,000 rows
// stay smooth. The grid element itself holds keyboard focus and names the active row with
// aria-activedescendant: rows can be rebuilt under a running evaluation without focus or selection moving.
// Every cell is text (textContent) or a node the caller built: nothing is ever parsed as HTML.
// A line is drawn again only when what it shows changed: the host sends its rows as new objects about once a second
// during a run, and every cell in view was rebuilt each time, finished rows too, for the editor's renderer to lay out.
import { el, setText } from './dom';

const OVERSCAN = 8;

export interface Column<K extends string = string> {
  key: K;
  title: string;
  className: string;
  sortable?: boolean;
}

export interface GridOptions<R, K extends string> {
  /** The grid's accessible name. */
  label: string;
  columns: ReadonlyArray<Column<K>>;
  /** A row's stable key. */
  keyOf(row: R): string;
  /** The row's accessible name. */
  rowLabel(row: R): string;
  /** Extra classes for the row. */
  rowClass?(row: R): string;
  /** Fills one cell node (text, or nodes). */
  cell(row: R, column: Column<K>, node: HTMLElement): void;
  onOpen?(row: R): void;
  onActive?(row: R): void;
  onSort?(key: K): void;
  /**
   * Rows in view that the source does not hold yet (a source whose rows live elsewhere: Run Details asks the
   * host for them); called after a render that met one, with the rows in view.
   */
  onNeed?(first: number, last: number): void;
  /** A key on the active row: true when handled (the grid owns arrows, Page Up/Down, Home/End and Enter). */
  onKey?(event: KeyboardEvent, row: R): boolean;
  rowHeight?: number;
  /** Shown when there are no rows at all. */
  empty?: string;
}

/**
 * Where the grid reads its rows: an array, or a window of rows held elsewhere (undefined: not here yet). Rows are
 * plain data (the host's tuples), and a cell shows only its row and what `changed()` announces.
 */
export interface RowSource<R> {
  readonly length: number;
  at(index: number): R | undefined;
}

export interface Grid<R, K extends string> {
  readonly element: HTMLElement;
  readonly viewport: HTMLElement;
  /** Replaces the rows; the active row is kept by key wherever it moved (or cleared when it is gone). */
  setRows(rows: R[]): void;
  /** Replaces the source; `activeIndex` says where the active row is now (-1: gone), as only the source knows. */
  setSource(source: RowSource<R>, activeIndex: number): void;
  /** The rows in view now (first inclusive, last exclusive). */
  visibleRange(): { first: number; last: number };
  /** What the rows in view show changed, apart from their data (a setting the cells read): repainted on the next frame. */
  changed(): void;
  setSort(key: K, direction: 1 | -1): void;
  setEmpty(text: string): void;
  readonly activeRow: R | undefined;
  /** Where the active row is (-1: none). */
  readonly activeIndex: number;
  /** The active row was moved to a place whose row has not arrived yet (its trace is not known yet). */
  readonly activePending: boolean;
  readonly size: number;
}

/** A pooled row node, remembering which row (and at which index) it shows. */
interface Line<R> {
  node: HTMLDivElement;
  index: number | undefined;
  row: R | undefined;
  /** What its cells were drawn from (contentOf, LOADING, or undefined: to be drawn). */
  drawn: string | undefined;
  /** Whether it was drawn as the active row. */
  active: boolean;
}

/** A line drawn as a row on its way from the host (no row's JSON is a lone NUL). */
const LOADING = '\0';

/** What a row's cells show, as one string: its data, since a cell shows nothing else of it. */
function contentOf(row: unknown): string {
  return JSON.stringify(row);
}

const MOVES: Record<string, (from: number, page: number, last: number) => number> = {
  ArrowDown: (from) => from + 1,
  ArrowUp: (from) => from - 1,
  PageDown: (from, page) => from + page,
  PageUp: (from, page) => from - page,
  Home: () => 0,
  End: (_from, _page, last) => last,
};

export function createGrid<R, K extends string>(options: GridOptions<R, K>): Grid<R, K> {
  return new VirtualGrid(options);
}

class VirtualGrid<R, K extends string> implements Grid<R, K> {
  readonly element = el('div', 'table');
  readonly viewport = el('div', 'viewport');
  private readonly spacer = el('div', 'spacer');
  private readonly body = el('div', 'body');
  private readonly emptyNode: HTMLDivElement;
  private readonly headers = new Map<K, HTMLDivElement>();
  private readonly rowHeight: number;
  private readonly pool: Array<Line<R>> = [];
  private rows: RowSource<R> = { length: 0, at: () => undefined };
  private active = -1;
  /** The active row moved to an index whose row had not arrived: onActive is owed when it does. */
  private activeOwed = false;
  private frame = 0;
  private nextId = 0;
  /**
   * The viewport's scroll offset and height as last told (its scroll events, a ResizeObserver; 0: not yet). Read from
   * the DOM in each render, they made the browser lay out the page there and then, after each update's changes:
   * a layout per update during a run, and again in the frame.
   */
  private top = 0;
  private height = 0;

  constructor(private readonly options: GridOptions<R, K>) {
    this.rowHeight = options.rowHeight ?? 26;
    this.element.setAttribute('role', 'grid');
    this.element.setAttribute('aria-label', options.label);
    this.element.tabIndex = 0;
    this.body.setAttribute('role', 'rowgroup');
    this.viewport.append(this.spacer, this.body);
    this.emptyNode = el('div', 'empty', options.empty ?? 'Nothing to show.');
    this.element.append(this.header(), this.viewport, this.emptyNode);
    this.element.addEventListener('keydown', (e) => this.key(e));
    this.element.addEventListener('focus', () => {
      if (this.active < 0 && this.rows.length) this.setActive(Math.floor(this.top / this.rowHeight));
    });
    this.viewport.addEventListener(
      'scroll',
      () => {
        this.top = this.viewport.scrollTop;
        this.renderSoon();
      },
      { passive: true },
    );
    // Told after the frame's layout, before its paint: the rows a new height shows are drawn in that frame.
    new ResizeObserver((entries) => {
      const height = Math.round(entries[entries.length - 1]!.contentRect.height);
      if (height === this.height) return;
      this.height = height;
      this.render();
    }).observe(this.viewport);
  }

  get activeIndex(): number {
    return this.active;
  }

  get activePending(): boolean {
    return this.activeOwed;
  }

  get activeRow(): R | undefined {
    return this.active >= 0 ? this.rows.at(this.active) : undefined;
  }

  get size(): number {
    return this.rows.length;
  }

  setRows(next: R[]): void {
    const current = this.activeRow;
    const key = current === undefined ? undefined : this.options.keyOf(current);
    this.setSource({ length: next.length, at: (i) => next[i] }, key === undefined ? -1 : next.findIndex((r) => this.options.keyOf(r) === key));
  }

  setSource(source: RowSource<R>, activeIndex: number): void {
    this.rows = source;
    this.active = activeIndex;
    this.spacer.style.height = `${source.length * this.rowHeight}px`;
    this.emptyNode.hidden = source.length > 0;
    this.render();
  }

  visibleRange(): { first: number; last: number } {
    const height = this.height || 600;
    // Where the browser will clamp the scroll when the rows got fewer (its scroll event tells it later).
    const top = Math.min(this.top, Math.max(0, this.rows.length * this.rowHeight - height));
    return {
      first: Math.max(0, Math.floor(top / this.rowHeight) - OVERSCAN),
      last: Math.min(this.rows.length, Math.ceil((top + height) / this.rowHeight) + OVERSCAN),
    };
  }

  changed(): void {
    // The rows' data did not change, so their content would match: forgotten, each line is drawn again.
    for (const line of this.pool) line.drawn = undefined;
    this.renderSoon();
  }

  setSort(key: K, direction: 1 | -1): void {
    for (const [k, cell] of this.headers) {
      const sort = k === key ? (direction > 0 ? 'ascending' : 'descending') : 'none';
      if (cell.getAttribute('aria-sort') !== sort) cell.setAttribute('aria-sort', sort);
    }
  }

  setEmpty(text: string): void {
    setText(this.emptyNode, text);
  }

  private header(): HTMLDivElement {
    const head = el('div', 'row head');
    head.setAttribute('role', 'row');
    head.setAttribute('aria-rowindex', '1');
    for (const column of this.options.columns) {
      const cell = el('div', `cell ${column.className}`);
      cell.setAttribute('role', 'columnheader');
      if (column.sortable) {
        const button = el('button', 'sort', column.title);
        button.tabIndex = -1;
        button.addEventListener('click', () => this.options.onSort?.(column.key));
        cell.append(button);
      } else cell.textContent = column.title;
      this.headers.set(column.key, cell);
      head.append(cell);
    }
    return head;
  }

  private line(): Line<R> {
    const node = el('div', 'row');
    node.setAttribute('role', 'row');
    node.id = `grid-row-${this.nextId++}`;
    for (const column of this.options.columns) {
      const cell = el('div', `cell ${column.className}`);
      cell.setAttribute('role', 'gridcell');
      node.append(cell);
    }
    const line: Line<R> = { node, index: undefined, row: undefined, drawn: undefined, active: false };
    node.addEventListener('click', (e) => {
      if (line.index === undefined) return;
      this.setActive(line.index, false);
      const onButton = e.target instanceof Element && e.target.closest('button');
      if (!onButton && line.row !== undefined) this.options.onOpen?.(line.row);
    });
    return line;
  }

  private fill(line: Line<R>, row: R | undefined, index: number): void {
    const { node } = line;
    const active = index === this.active;
    if (line.index !== index) {
      line.index = index;
      node.style.transform = `translateY(${index * this.rowHeight}px)`;
      node.setAttribute('aria-rowindex', String(index + 2));
    }
    line.row = row;
    const content = row === undefined ? LOADING : contentOf(row);
    if (line.drawn === content) {
      if (line.active !== active) this.markActive(line, active);
      return;
    }
    line.drawn = content;
    if (row === undefined) {
      // A row on its way from the host: an empty line, named as such, until it arrives.
      node.className = 'row loading';
      node.setAttribute('aria-label', 'Loading…');
      delete node.dataset.key;
      for (const cell of node.children) cell.replaceChildren();
    } else {
      node.className = `row ${this.options.rowClass?.(row) ?? ''}`;
      node.setAttribute('aria-label', this.options.rowLabel(row));
      node.dataset.key = this.options.keyOf(row);
      this.options.columns.forEach((column, i) => {
        const cell = node.children[i] as HTMLElement;
        cell.replaceChildren();
        this.options.cell(row, column, cell);
      });
    }
    this.markActive(line, active);
  }

  private markActive(line: Line<R>, active: boolean): void {
    line.active = active;
    line.node.setAttribute('aria-selected', active ? 'true' : 'false');
    line.node.classList.toggle('active', active);
  }

  private render(): void {
    this.frame = 0;
    const { first, last } = this.visibleRange();
    const needed = Math.max(0, last - first);
    let missing = false;
    while (this.pool.length < needed) this.pool.push(this.line());
    for (let k = 0; k < this.pool.length; k++) {
      const line = this.pool[k]!;
      if (k < needed) {
        const row = this.rows.at(first + k);
        missing ||= row === undefined;
        this.fill(line, row, first + k);
        if (!line.node.isConnected) this.body.append(line.node);
      } else if (line.node.isConnected) {
        line.node.remove();
        line.index = undefined;
        line.row = undefined;
        line.drawn = undefined;
      }
    }
    const activeLine = this.pool.find((l) => l.node.isConnected && l.index === this.active);
    const descendant = activeLine?.node.id ?? null;
    if (this.element.getAttribute('aria-activedescendant') !== descendant) {
      if (descendant) this.element.setAttribute('aria-activedescendant', descendant);
      else this.element.removeAttribute('aria-activedescendant');
    }
    if (this.activeOwed) this.tellActive();
    if (missing) this.options.onNeed?.(first, last);
  }

  /** onActive with the active row, once it is here. */
  private tellActive(): void {
    const row = this.activeRow;
    this.activeOwed = row === undefined;
    if (row !== undefined) this.options.onActive?.(row);
  }

  private renderSoon(): void {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.render());
  }

  private scrollIntoView(index: number): void {
    const top = index * this.rowHeight;
    const height = this.height || 600;
    if (top < this.top) this.scrollTo(top);
    else if (top + this.rowHeight > this.top + height) this.scrollTo(top + this.rowHeight - height);
  }

  private scrollTo(top: number): void {
    this.viewport.scrollTop = top;
    this.top = top;
  }

  private setActive(index: number, scroll = true): void {
    if (this.rows.length === 0) return;
    this.active = Math.max(0, Math.min(this.rows.length - 1, index));
    if (scroll) this.scrollIntoView(this.active);
    this.activeOwed = true;
    this.render();
  }

  private key(e: KeyboardEvent): void {
    const row = this.activeRow;
    if (row !== undefined && this.options.onKey?.(e, row)) {
      e.preventDefault();
      return;
    }
    const move = MOVES[e.key];
    if (move) {
      const page = Math.max(1, Math.floor((this.height || 600) / this.rowHeight) - 1);
      const forward = e.key === 'ArrowDown' || e.key === 'PageDown';
      const from = this.active < 0 ? (forward ? -1 : this.rows.length) : this.active;
      this.setActive(move(from, page, this.rows.length - 1));
      e.preventDefault();
    } else if (e.key === 'Enter' && row !== undefined) {
      this.options.onOpen?.(row);
      e.preventDefault();
    }
  }
}
