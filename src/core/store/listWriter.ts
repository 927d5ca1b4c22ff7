import { commit, commitAll } from './commit';
import type { Journal } from '../journal/journal';
import type { JournalRecord } from '../journal/journalRecords';
import type { HeldPrompts } from './heldPrompts';
import type { PromptItem } from '../../api/schemas';
import type { TraceStore } from './traceStore';

/** A write to the journal failed while the list was registered: the run stops as for any journal failure. */
export class JournalWriteError extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

// Items journaled before the writer waits for the window before them: bounds what the journal's queue holds of a long
// list to two windows (one on its way to disk, one filling).
const LIST_WINDOW = 512;
// A window's prompts past this many characters wait for their own write, as before: two windows of long prompts in
// flight held their texts twice (100,000 prompts of 2 KB: 25 MB more peak RSS).
const OVERLAP_CHARS = 1_000_000;

/**
 * Puts the service's list in the store, and in the journal where it is new or changed (the journal owns the prompts):
 * one item record per such prompt as the list comes, each batch's in one write, then the list's size. A trace listed
 * twice is handled once (the first).
 */
export class ListWriter {
  private readonly seen = new Set<string>();
  private readonly repeated: string[] = [];
  private pending: Promise<void>[] = [];
  /** The window before, still going to disk while the next is parsed and queued. */
  private older: Promise<void>[] = [];
  private pendingItems = 0;
  private pendingChars = 0;
  private changed = 0;

  constructor(
    private readonly store: TraceStore,
    private readonly journal: Journal,
    private readonly warn: (message: string) => void,
    /** Where the listed prompts are held for the run's target calls (heldPrompts.ts); none: not held. */
    private readonly held?: HeldPrompts,
  ) {}

  async add(items: readonly PromptItem[]): Promise<void> {
    const records: JournalRecord[] = [];
    const at = Date.now();
    for (const { traceId, content } of items) {
      if (this.seen.has(traceId)) {
        this.repeated.push(traceId);
        continue;
      }
      this.seen.add(traceId);
      this.held?.keep(traceId, content);
      const known = this.store.traces.peek(traceId);
      if (known?.hasPrompt && known.prompt === content) continue;
      records.push({ t: 'item', id: traceId, p: content, at });
      this.pendingChars += content.length;
    }
    if (records.length === 0) return;
    // One write per batch: a promise and a queued line per prompt cost a 20,000-trace run more than its journal writes.
    this.changed += records.length;
    this.pendingItems += records.length;
    const write = commitAll(this.journal, this.store, records);
    // Its failure is seen by the wait for its window (below, or the list's end), never as an unhandled rejection.
    write.catch(() => undefined);
    this.pending.push(write);
    if (this.pendingItems < LIST_WINDOW) return;
    if (this.pendingChars >= OVERLAP_CHARS) return this.settle();
    // The window before this one waited for, not this one: its write goes on while the body's next piece is read,
    // where a wait for each window's own write idled the list between them (20,000 prompts: some 40 writes).
    const older = this.older;
    this.older = this.takeWindow();
    await settled(older);
  }

  /** The list's size journaled (when anything changed); the ids listed. */
  async end(): Promise<ReadonlySet<string>> {
    await this.settle();
    if (this.repeated.length) {
      this.warn(`The service listed ${this.repeated.length} trace id(s) more than once (first: "${this.repeated[0]}"); each is handled once.`);
    }
    const { store } = this;
    if (this.changed > 0 || !store.promptsRecorded || store.listedTotal !== this.seen.size) {
      await commit(this.journal, store, { t: 'list', at: Date.now(), total: this.seen.size, full: true }).catch((error: unknown) => {
        throw new JournalWriteError(error);
      });
    }
    return this.seen;
  }

  private async settle(): Promise<void> {
    const batch = [...this.older, ...this.takeWindow()];
    this.older = [];
    await settled(batch);
  }

  /** The window filling, handed over; the next starts empty. */
  private takeWindow(): Promise<void>[] {
    const window = this.pending;
    this.pending = [];
    this.pendingItems = 0;
    this.pendingChars = 0;
    return window;
  }
}

/** The writes on disk, or the first failure as the list's. */
async function settled(writes: readonly Promise<void>[]): Promise<void> {
  await Promise.all(writes).catch((error: unknown) => {
    throw new JournalWriteError(error);
  });
}
