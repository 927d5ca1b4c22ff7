// What Run Details and Compare Runs share of their tables on the host: the keys of the rows the page's filters
// leave, in order, and the window of rows the page asks for. The host holds the rows; only those in view (and a
// margin) cross to the page. No vscode import: the unit tests drive it directly.
import type { RowWindow } from '../../webview/protocol';

/** The most rows one answer carries: a page asks for what it shows and a margin. */
export const MAX_WINDOW = 2_000;

/** How much of each text a search reads: well past the previews, yet bounded whatever a target answers. */
export const SEARCH_CHARS = 1_000;

/** A table's view as trace ids; each new set of ids is a new version (the page drops rows of another version). */
export class RowView {
  private keys: readonly string[] = [];
  private positions: Map<string, number> | undefined;
  version = 0;

  get length(): number {
    return this.keys.length;
  }

  set(keys: readonly string[]): void {
    this.keys = keys;
    this.positions = undefined;
    this.version++;
  }

  /** The keys from `start` to `end`. */
  keysIn(start: number, end: number): string[] {
    return this.keys.slice(start, end);
  }

  /** Where a key sits in the view (-1: not in it). */
  indexOf(key: string): number {
    if (!this.positions) {
      this.positions = new Map();
      for (let i = 0; i < this.keys.length; i++) this.positions.set(this.keys[i]!, i);
    }
    return this.positions.get(key) ?? -1;
  }

  /**
   * The page's window: the rows from start to end (at most MAX_WINDOW), where its active row is now, and the counts.
   * A key `rowOf` does not know ends the rows there rather than shift the rest out of their places.
   */
  window<R>(start: number, end: number, activeKey: string | null, total: number, rowOf: (key: string) => R | undefined): RowWindow<R> {
    const rows: R[] = [];
    const last = Math.min(this.keys.length, end, start + MAX_WINDOW);
    for (let i = start; i < last; i++) {
      const r = rowOf(this.keys[i]!);
      if (r === undefined) break;
      rows.push(r);
    }
    return { version: this.version, length: this.keys.length, total, start, rows, activeIndex: activeKey === null ? -1 : this.indexOf(activeKey) };
  }
}

/** The first SEARCH_CHARS of a text, for the search. */
export function searchHead(text: string | undefined): string | null {
  if (text === undefined) return null;
  return text.length > SEARCH_CHARS ? text.slice(0, SEARCH_CHARS) : text;
}
