import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

// How far V8's heap may grow past what it held after a collection: 1.5×, and at least HEADROOM_BYTES more. V8's own
// factor reaches 4× when a program allocates fast, and a run allocates fast (every prompt and answer passes through as
// a string): a 100,000 × 2 KB run holds some 40 MB and its process reached 225 MB; at 1.5× it peaks near 155 MB. A
// small heap is given room in bytes instead: at 1.5× of the 11–15 MB a 20,000-trace run holds, its old generation
// was full every second. 16 MB of room took that run's peak RSS from 121 to 140 MB (the heap ran to 50 MB between
// collections); 8 MB keeps it near 121–128 MB for some 40 ms more CPU a run (six full collections instead of three,
// 10–15 ms each). The room is below what 1.5× gives the heaps that set a large run's peak (over 16 MB).
const GROWTH_PERCENT = 50;
const HEADROOM_BYTES = 8 * 1024 * 1024;
// V8's own largest factor (4×): the headroom never lets a heap grow faster than V8 itself would.
const MAX_PERCENT = 300;

/** The growth allowed past `liveBytes` after a full collection, in percent: 1.5×, or HEADROOM_BYTES more, at most 4×. */
export function growthPercent(liveBytes: number): number {
  return Math.min(MAX_PERCENT, Math.max(GROWTH_PERCENT, Math.ceil((HEADROOM_BYTES / Math.max(liveBytes, 1)) * 100)));
}

/**
 * Keeps the heap of a process of ours (the CLI, the runner) close to what it holds. Not for the extension host: that
 * process is shared with every other extension, and its settings are the editor's. V8 reads the percent at each full
 * collection; it is set again after each one from what the heap then holds.
 */
export function boundHeapGrowth(): void {
  let percent = growthPercent(getHeapStatistics().used_heap_size);
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  new PerformanceObserver((list) => {
    if (!list.getEntries().some((e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
    const next = growthPercent(getHeapStatistics().used_heap_size);
    if (next !== percent) setFlagsFromString(`--heap-growing-percent=${(percent = next)}`);
  }).observe({ entryTypes: ['gc'] });
}
