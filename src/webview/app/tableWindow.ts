// The page's part of Process Details' table: the rows the host sent of its current view, and asking for more as
// the grid scrolls. The host holds the 100,000 rows, filters and sorts them; the page keeps what it shows and a
// margin either side, as the host last sent them.
import type { RowTuple, ViewMessage } from '../protocol';
import type { RowSource } from './grid';

/** Rows asked for beyond those in view, either side, so a scroll of a page or two needs no new answer. */
const MARGIN = 100;

export class TableWindow implements RowSource<RowTuple> {
  length = 0;
  total = 0;
  /** The host's view these rows belong to. */
  version = -1;
  /** The rows from `start` on, as the host last sent them. */
  private start = 0;
  private rows: RowTuple[] = [];
  /** A question is on its way: the grid's next render after the answer asks again if rows are still missing. */
  private asking = false;

  constructor(private readonly ask: (start: number, end: number) => void) {}

  at(index: number): RowTuple | undefined {
    return this.rows[index - this.start];
  }

  /**
   * The page keeps exactly the rows of the host's latest answer: those are the rows the host keeps fresh during a
   * run, so a row kept from an older answer would show a trace's state of then.
   */
  receive(m: ViewMessage): void {
    this.start = m.start;
    this.rows = m.rows;
    this.version = m.version;
    this.length = m.length;
    this.total = m.total;
    this.asking = false;
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
