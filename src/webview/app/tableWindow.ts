// The page's part of a table the host holds (Run Details, Compare Runs): the rows the host sent of its current
// view, and asking for more as the grid scrolls. The host holds the 100,000 rows, filters and sorts them; the page
// keeps what it shows and a margin either side, as the host last sent them.
import type { RowWindow } from '../protocol';
import type { RowSource } from './grid';

/** Rows asked for beyond those in view, either side, so a scroll of a page or two needs no new answer. */
const MARGIN = 100;

/** What the window reads of the grid to place its active row. */
interface ActiveRow {
  readonly activeIndex: number;
  readonly activePending: boolean;
}

export class TableWindow<R> implements RowSource<R> {
  length = 0;
  total = 0;
  /** The host's view these rows belong to. */
  version = -1;
  /** The rows from `start` on, as the host last sent them. */
  private start = 0;
  private rows: R[] = [];
  /** A question is on its way: the grid's next render after the answer asks again if rows are still missing. */
  private asking = false;

  constructor(
    private readonly ask: (start: number, end: number) => void,
    private readonly keyOf: (row: R) => string,
  ) {}

  at(index: number): R | undefined {
    return this.rows[index - this.start];
  }

  /**
   * The page keeps exactly the rows of the host's latest answer: those are the rows the host keeps fresh during a
   * run, so a row kept from an older answer would show a trace's state of then. Returns where the active row is now:
   * where it was when the order is the same, or when it was just moved to a place whose row is on its way (End,
   * Page Down: the place is what the user chose); else where these rows or the host place `activeKey`.
   */
  receive(m: RowWindow<R>, grid: ActiveRow, activeKey: string | undefined): number {
    let active = m.activeIndex;
    if (m.version === this.version || grid.activePending) active = Math.min(grid.activeIndex, m.length - 1);
    else {
      const here = m.rows.findIndex((r) => this.keyOf(r) === activeKey);
      if (here >= 0) active = m.start + here;
    }
    this.start = m.start;
    this.rows = m.rows;
    this.version = m.version;
    this.length = m.length;
    this.total = m.total;
    this.asking = false;
    return active;
  }

  /** The grid shows rows first…last and lacks some: asks for them, unless a question is already out. */
  need(first: number, last: number): void {
    if (this.asking) return;
    if (first < this.start || last > this.start + this.rows.length) this.query(first, last);
  }

  /** Asks for the rows first…last (and the margin) under the page's filters, whatever the page holds. */
  query(first: number, last: number): void {
    this.asking = true;
    this.ask(Math.max(0, first - MARGIN), last + MARGIN);
  }
}
