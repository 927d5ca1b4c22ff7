import type * as BatchRunModule from './batchRun';

/**
 * The Batch API's run path, loaded on first use: only a run of the openai target with batch: true needs it, so in the
 * extension it is a file of its own (dist/batchRun.js) that activation does not load. The CLI and the runner bundle it.
 */
export function batchRunModule(): typeof BatchRunModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./batchRun') as typeof BatchRunModule;
}
