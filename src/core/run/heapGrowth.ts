import { setFlagsFromString } from 'node:v8';

// How far V8's heap may grow past what it held after a collection: 1.5×. V8's own factor reaches 4× when a program
// allocates fast, and a run allocates fast (every prompt and answer passes through as a string): a 100,000 × 2 KB run
// holds some 40 MB and its process reached 225 MB; with this it peaks near 155 MB, for a few percent more collection.
const GROWTH_PERCENT = 50;

/**
 * Keeps the heap of a process of ours (the CLI, the runner) close to what it holds. Not for the extension host: that
 * process is shared with every other extension, and its settings are the editor's. Read by V8 at each collection, so
 * it holds from the call on.
 */
export function boundHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${GROWTH_PERCENT}`);
}
