import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { commandEnv } from './commandTarget';
import { createWorkerTarget } from './workerTarget';
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
}

export const DEFAULT_PYTHON_FUNCTION = 'answer';

export function defaultPython(platform = process.platform): string {
  return platform === 'win32' ? 'py' : 'python3';
}

/** The run's workers by default: the run's concurrency, at most one per core. */
export function defaultWorkers(concurrency: number): number {
  return Math.max(1, Math.min(concurrency, availableParallelism()));
}

/**
 * The shim that imports the user's module and speaks the worker protocol. It ships beside the bundle
 * (dist/evalRunnerShim.py, in the CLI package and the VSIX alike); tests run it from the sources.
 */
export function shimPath(): string {
  const candidates = [join(__dirname, 'evalRunnerShim.py'), join(__dirname, '..', '..', '..', '..', 'src', 'core', 'targets', 'evalRunnerShim.py')];
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
  return `python: ${basename(spec.file)}:${spec.function ?? DEFAULT_PYTHON_FUNCTION} @ ${pythonFileHash(spec, cwd)}`;
}

export interface PythonTargetOptions {
  concurrency: number;
  cwd?: string;
  withhold?: readonly string[];
  onLog?: WorkerTargetOptions['onLog'];
}

/** A function in the user's file, called once per prompt in long-lived workers that load the module once. */
export function createPythonTarget(spec: PythonTargetSpec, options: PythonTargetOptions): WorkerTarget {
  const file = pythonFilePath(spec, options.cwd);
  if (!existsSync(file)) throw new TypeError(`The Python file ${spec.file} does not exist.`);
  const fn = spec.function ?? DEFAULT_PYTHON_FUNCTION;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(fn)) throw new TypeError(`"${fn}" is not a Python function name.`);
  return createWorkerTarget({
    what: `The Python function ${basename(file)}:${fn}`,
    description: describePython(spec, options.cwd),
    program: spec.python || defaultPython(),
    args: ['-u', shimPath(), file, fn],
    workers: spec.workers ?? defaultWorkers(options.concurrency),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...commandEnv(process.env, options.withhold), PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' },
    handshake: true,
    ...(options.onLog ? { onLog: options.onLog } : {}),
  });
}
