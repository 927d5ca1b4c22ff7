// A run's target calls take the prompts its list just brought, while they are still in memory, instead of reading
// each one back from the journal line it was written to: aa14c05 held the whole list, and the read-back (a pread, a
// decode and a parse per prompt, and their garbage) is part of what a 20,000-trace run spent more since.
// Bounded: a list whose prompts pass MAX_HELD_CHARS holds none, and its prompts are read back as before.
const MAX_HELD_CHARS = 4_000_000;

/** The prompts of a list as it was journaled, by trace id, each taken once; none once the list is past the bound. */
export class HeldPrompts {
  private texts = new Map<string, string>();
  private chars = 0;
  private over = false;

  constructor(private readonly maxChars = MAX_HELD_CHARS) {}

  /** Holds a listed prompt (the text the journal holds for it), unless the list is past the bound. */
  keep(traceId: string, text: string): void {
    if (this.over) return;
    this.chars += traceId.length + text.length;
    if (this.chars <= this.maxChars) {
      this.texts.set(traceId, text);
      return;
    }
    // Past the bound, none is kept: a large list costs no memory here, and its run reads prompts back in order.
    this.over = true;
    this.texts = new Map();
  }

  /** Keeps only these traces' prompts: those the run will not call (answered before, another shard's, past --limit) go. */
  retain(traces: Iterable<{ traceId: string }>): void {
    if (this.texts.size === 0) return;
    const ids: string[] = [];
    for (const { traceId } of traces) if (this.texts.has(traceId)) ids.push(traceId);
    // A fresh run calls every prompt it listed: the Map stays as it is, where a copy doubled its tables at the peak.
    if (ids.length === this.texts.size) return;
    const kept = new Map<string, string>();
    for (const id of ids) kept.set(id, this.texts.get(id)!);
    this.texts = kept;
  }

  /** The trace's listed prompt, once; undefined when it is not held (or was taken). */
  take(traceId: string): string | undefined {
    const text = this.texts.get(traceId);
    if (text !== undefined) this.texts.delete(traceId);
    return text;
  }

  get size(): number {
    return this.texts.size;
  }
}
