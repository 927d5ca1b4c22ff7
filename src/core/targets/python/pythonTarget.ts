import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { commandEnv } from '../command/commandTarget';
import { DEFAULT_BATCH_WAIT_MS } from './workerBatches';
import type { BatchOptions } from './workerBatches';
import { workerTargets } from './workerLoader';
import type { WorkerTarget, WorkerTargetOptions } from './workerTarget';

export interface PythonTargetSpec {
  type: 'python';
  /** The user's .py file; relative paths are read from the working folder (the CLI's, or the workspace's). */
  file: string;
  /** Defaults to `answer`. */
  function?: string;
  /** The interpreter; defaults to python3 (py on Windows). */
  python?: string;
  workers?: number;
  /** A batch function: called with (prompts, contexts), lists of up to this many, returning a list of answers in order. */
  batchSize?: number;
  /** With batchSize: how long a prompt waits for its batch to fill before the batch goes as it is (default 20 ms). */
  batchWaitMs?: number;
}

export const MAX_BATCH_SIZE = 100_000;
export const MAX_BATCH_WAIT_MS = 60_000;

export const DEFAULT_PYTHON_FUNCTION = 'answer';

export function defaultPython(platform = process.platform): string {
  return platform === 'win32' ? 'py' : 'python3';
}

/**
 * The run's workers by default: the run's concurrency, at most one per core. A batch function's worker takes up to a
 * batch's worth of the run's prompts at once, so it gets as many workers as full batches fit in the concurrency.
 */
export function defaultWorkers(concurrency: number, batchSize = 1): number {
  return Math.max(1, Math.min(Math.floor(concurrency / batchSize), availableParallelism()));
}

/**
 * The shim that imports the user's module and speaks the worker protocol. It ships beside the bundle
 * (dist/evalRunnerShim.py, in the CLI package and the VSIX alike); tests run it from the sources.
 */
export function shimPath(): string {
  const candidates = [join(__dirname, 'evalRunnerShim.py'), join(__dirname, '..', '..', '..', '..', '..', 'src', 'core', 'targets', 'python', 'evalRunnerShim.py')];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new TypeError('The Python shim (evalRunnerShim.py) is missing from this installation; reinstall Eval Runner.');
  return found;
}

export function pythonFilePath(spec: PythonTargetSpec, cwd = process.cwd()): string {
  return isAbsolute(spec.file) ? spec.file : resolve(cwd, spec.file);
}

/** The first six hex digits of the file's SHA-256: an edit makes another target (another run identity). */
export function pythonFileHash(spec: PythonTargetSpec, cwd?: string): string {
  try {
    return createHash('sha256').update(readFileSync(pythonFilePath(spec, cwd))).digest('hex').slice(0, 6);
  } catch {
    return 'missing';
  }
}

export function describePython(spec: PythonTargetSpec, cwd?: string): string {
  const batches = spec.batchSize !== undefined ? `, batches of ${spec.batchSize}` : '';
  return `python: ${basename(spec.file)}:${spec.function ?? DEFAULT_PYTHON_FUNCTION} @ ${pythonFileHash(spec, cwd)}${batches}`;
}

/** The spec's batching, checked; undefined for a function called once per prompt. */
export function pythonBatch(spec: PythonTargetSpec): BatchOptions | undefined {
  const whole = (n: number | undefined, min: number, max: number) => n === undefined || (Number.isInteger(n) && n >= min && n <= max);
  if (!whole(spec.batchSize, 1, MAX_BATCH_SIZE)) throw new TypeError(`The batch size must be a whole number from 1 to ${MAX_BATCH_SIZE} (got ${spec.batchSize}).`);
  if (!whole(spec.batchWaitMs, 0, MAX_BATCH_WAIT_MS)) throw new TypeError(`The batch wait must be a whole number of ms from 0 to ${MAX_BATCH_WAIT_MS} (got ${spec.batchWaitMs}).`);
  if (spec.batchSize === undefined) return undefined;
  return { size: spec.batchSize, waitMs: spec.batchWaitMs ?? DEFAULT_BATCH_WAIT_MS };
}

export interface PythonTargetOptions {
  concurrency: number;
  cwd?: string;
  withhold?: readonly string[];
  onLog?: WorkerTargetOptions['onLog'];
}

/**
 * A function in the user's file, called once per prompt (or once per batch, with batchSize) in long-lived workers
 * that load the module once.
 */
export function createPythonTarget(spec: PythonTargetSpec, options: PythonTargetOptions): WorkerTarget {
  const file = pythonFilePath(spec, options.cwd);
  if (!existsSync(file)) throw new TypeError(`The Python file ${spec.file} does not exist.`);
  const fn = spec.function ?? DEFAULT_PYTHON_FUNCTION;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(fn)) throw new TypeError(`"${fn}" is not a Python function name.`);
  const batch = pythonBatch(spec);
  if (batch && batch.size > options.concurrency) {
    // The run never has more prompts out at once than its concurrency: a batch cannot hold more.
    options.onLog?.('warn', `Batches of ${batch.size} with a concurrency of ${options.concurrency}: a batch holds at most ${options.concurrency} prompts; raise the concurrency to fill them.`);
  }
  return workerTargets().createWorkerTarget({
    what: `The Python function ${basename(file)}:${fn}`,
    description: describePython(spec, options.cwd),
    program: spec.python || defaultPython(),
    args: ['-u', shimPath(), file, fn],
    workers: spec.workers ?? defaultWorkers(options.concurrency, batch?.size),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...commandEnv(process.env, options.withhold), PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' },
    handshake: true,
    ...(options.onLog ? { onLog: options.onLog } : {}),
    ...(batch ? { batch } : {}),
  });
}
