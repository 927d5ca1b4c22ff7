// Ctrl-C for a command that runs an evaluation (`run`, the demo): the first stops starting work and saves, the second
// aborts at once. The same on every platform Node delivers SIGINT and SIGTERM on (on Windows, Ctrl-C in a console).
export const DRAIN_WORDS = 'Finishing the traces in flight and saving; press Ctrl-C again to stop at once.';

/** Ctrl-C once: finish in-flight traces and save; twice: abort at once. */
export function interruptSignals(
  stderr: NodeJS.WritableStream,
  /** What the first Ctrl-C does, in words (the demo, once its runs are over, only stops). */
  firstWords: () => string = () => DRAIN_WORDS,
): { drain: AbortController; hard: AbortController; dispose(): void } {
  const drain = new AbortController();
  const hard = new AbortController();
  const onSignal = () => {
    if (!drain.signal.aborted) {
      drain.abort();
      stderr.write(`\n${firstWords()}\n`);
    } else hard.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    drain,
    hard,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
