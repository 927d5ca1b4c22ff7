// The kinds that run the user's own code in long-lived workers on this machine: a Python function, and any worker
// program speaking the worker protocol.
import { basename, relative } from 'node:path';
import { commandEnv } from '../command/commandTarget';
import { splitCommandLine } from '../processes';
import { DEFAULT_PYTHON_FUNCTION, MAX_BATCH_SIZE, MAX_BATCH_WAIT_MS, createPythonTarget, defaultPython, defaultWorkers, describePython, pythonFileHash, pythonFilePath } from './pythonTarget';
import { DEFAULT_BATCH_WAIT_MS } from './workerBatches';
import { workerTargets } from './workerLoader';
import type { KindKey } from '../kinds/kind';
import { TargetConfigError, defineKind } from '../kinds/kind';

const WORKERS: KindKey = {
  name: 'workers',
  type: 'integer',
  min: 1,
  max: 256,
  flag: 'workers',
  arg: 'N',
  description: 'worker processes (default: the concurrency, at most one per core)',
};

export const pythonKind = defineKind({
  type: 'python',
  summary:
    'a function in your Python file, called in long-lived workers that load the module once: def answer(prompt) or def answer(prompt, context), ' +
    'async too, returning a string or {"answer": str, "usage": {...}}',
  picks: [{ id: 'python', label: 'Python function', description: 'a function in your .py file, its module loaded once' }],
  keys: [
    { name: 'file', type: 'string', required: true, flag: 'python-file', arg: 'FILE', description: "the .py file (a relative path is read from the workspace, the config file's folder, or the working folder)" },
    { name: 'function', type: 'string', flag: 'python-function', arg: 'NAME', description: `the function that answers a prompt (default ${DEFAULT_PYTHON_FUNCTION})` },
    { name: 'python', type: 'string', flag: 'python', arg: 'EXE', description: "the interpreter (default: the editor's Python environment, else python3, or py on Windows)" },
    WORKERS,
    {
      name: 'batchSize',
      type: 'integer',
      min: 1,
      max: MAX_BATCH_SIZE,
      flag: 'batch-size',
      arg: 'N',
      description:
        'a batch function: def answer(prompts, contexts) gets lists of up to N and returns a list of answers, same length, same order ' +
        '(workers default to the concurrency ÷ N: raise the concurrency to fill the batches)',
    },
    { name: 'batchWaitMs', type: 'integer', min: 0, max: MAX_BATCH_WAIT_MS, flag: 'batch-wait-ms', arg: 'MS', description: `with a batch size: how long a prompt waits for its batch to fill (default ${DEFAULT_BATCH_WAIT_MS})` },
  ],
  readFlags(values) {
    if (values['batch-wait-ms'] !== undefined && values['batch-size'] === undefined) throw new TargetConfigError('--batch-wait-ms goes with --batch-size N (a batch function).');
  },
  normalise(t) {
    // batchSize and batchWaitMs as numbers ("8" too). One that is not a number is kept as NaN rather than dropped: the
    // core then refuses it in words, where dropping it would call a batch function with one prompt at a time.
    const { batchSize, batchWaitMs, ...rest } = t;
    const number = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN);
    return {
      ...rest,
      ...(batchSize !== undefined && batchSize !== null ? { batchSize: number(batchSize) } : {}),
      ...(batchWaitMs !== undefined && batchWaitMs !== null ? { batchWaitMs: number(batchWaitMs) } : {}),
    };
  },
  localProcess: true,
  identity(spec, cwd) {
    const file = pythonFilePath(spec, cwd);
    // A batch size changes how the function is called (lists of prompts): another target. Unset adds nothing, so the
    // fingerprints of runs before batches stay the same.
    const batch = spec.batchSize !== undefined ? [`batch ${spec.batchSize}`] : [];
    const rest = [spec.function ?? DEFAULT_PYTHON_FUNCTION, spec.python ?? defaultPython(), pythonFileHash(spec, cwd), ...batch];
    return {
      description: describePython(spec, cwd),
      // The file by its name and content, never by where the command was run from.
      parts: [basename(file), ...rest],
      aliasParts: [relative(cwd ?? process.cwd(), file).split('\\').join('/'), ...rest],
      facts: { file: basename(file), function: rest[0], interpreter: rest[1], "file's content": rest[2], 'batch size': spec.batchSize },
    };
  },
  create: (spec, _secrets, options) =>
    createPythonTarget(spec, {
      concurrency: options.connections,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.withhold ? { withhold: options.withhold } : {}),
      ...(options.onLog ? { onLog: options.onLog } : {}),
    }),
});

export const workerKind = defineKind({
  type: 'worker',
  summary: 'any long-lived command speaking the worker protocol (JSON lines, see docs/targets.md)',
  picks: [{ id: 'worker', label: 'Worker', description: 'your long-lived program speaking JSON lines (any language)' }],
  keys: [{ name: 'command', type: 'string', required: true, flag: 'worker-command', arg: 'CMD', description: 'the command, started directly (without a shell) once per worker' }, WORKERS],
  localProcess: true,
  identity: (spec) => ({ description: `worker: ${spec.command}`, parts: [spec.command], facts: { command: spec.command } }),
  create(spec, _secrets, options) {
    const [program, ...args] = splitCommandLine(spec.command);
    if (!program) throw new TypeError('The worker command is empty.');
    return workerTargets().createWorkerTarget({
      what: 'The worker',
      description: `worker: ${spec.command}`,
      program,
      args,
      workers: spec.workers ?? defaultWorkers(options.connections),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: commandEnv(process.env, options.withhold),
      ...(options.onLog ? { onLog: options.onLog } : {}),
    });
  },
});
