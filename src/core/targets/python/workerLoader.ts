import type * as WorkerTargetModule from './workerTarget';

/**
 * The worker target (its processes and their protocol), loaded on the first python or worker target. Those run in
 * the runner process or the CLI, which bundle it; the extension host never starts one, so in the extension it is a
 * file of its own (dist/workerTarget.js) that activation does not read.
 */
export function workerTargets(): typeof WorkerTargetModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./workerTarget') as typeof WorkerTargetModule;
}
