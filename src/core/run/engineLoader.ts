import type * as EngineModule from './engine';

/**
 * The run engine, loaded when a run starts. The editor's runs go to the runner process (dist/runner.js, which bundles
 * the engine and every target kind), so the extension host never loads it: in the extension it is a file of its own
 * (dist/engine.js) that activation does not read. The CLI and the runner bundle it.
 */
export function engineModule(): typeof EngineModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./engine') as typeof EngineModule;
}
