import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WITHHELD_ENV } from '../command/commandTarget';
import { splitCommandLine } from '../processes';
import { DEFAULT_PYTHON_FUNCTION, defaultPython } from './pythonTarget';
import type { PythonTargetSpec } from './pythonTarget';
import { readUsage } from '../target';
import type { TargetUsage } from '../target';
import type { TargetSpec } from '../targetSpec';

/**
 * Debug Trace: one trace's prompt through the user's own code under the editor's debugger. This module decides what
 * to launch (a launch configuration for the Python Debugger's `debugpy` or the built-in JavaScript debugger) and
 * reads what came back; the extension only starts the session and waits for its end.
 *
 * The prompt never travels in argv (a process list shows it) nor in the environment: it is written to a file in a
 * private temporary folder, and the debug shim writes its answer beside it. The run's own workers are untouched:
 * the debugged process is one of its own.
 */

/** What the debug shims read: the worker protocol's request line, as one JSON file. */
export interface DebugRequest {
  prompt: string;
  traceId: string;
  evaluationId: number;
  kind: string;
}

export type DebugKind = 'python' | 'node';

export interface DebugFiles {
  dir: string;
  request: string;
  answer: string;
}

export interface DebugLaunch {
  kind: DebugKind;
  /** The launch configuration for vscode.debug.startDebugging (plain JSON). */
  configuration: Record<string, unknown>;
}

/** The key a launch configuration carries so its session can be told apart from the user's own. */
export const DEBUG_ID_KEY = '__evalRunnerDebugId';

/** What the debugged call gave: an answer, the user's exception, or why it could not start. */
export type DebugOutcome = { answer: string; usage?: TargetUsage } | { error: string; traceback?: string } | { fatal: string };

const MAX_ANSWER_FILE = 64 * 1024 * 1024;
const REQUEST_ID = 1;

/** The target kinds Debug Trace can run under a debugger. */
export function debuggable<T extends { type: string }>(spec: T): spec is Extract<T, { type: 'python' | 'worker' }> {
  return spec.type === 'python' || spec.type === 'worker';
}

/**
 * The files beside the bundle that run the user's code under the debugger (dist/, in the VSIX and the CLI package
 * alike); tests run them from the sources and the compiled tree.
 */
export function debugShimPath(kind: DebugKind, here = __dirname): string {
  const name = kind === 'python' ? 'evalRunnerDebug.py' : 'debugWorker.js';
  // From out/src/core/targets/python (the tests), the Python shim is read from the sources; the Node one is compiled there.
  const candidates = kind === 'python' ? [join(here, name), join(here, '..', '..', '..', '..', '..', 'src', 'core', 'targets', 'python', name)] : [join(here, name)];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new TypeError(`The debug shim (${name}) is missing from this installation; reinstall Eval Runner.`);
  return found;
}

/** A private folder (0700) holding the request (0600); the answer file is named, and written by the shim. */
export function writeDebugRequest(request: DebugRequest, batch: boolean, parent = tmpdir()): DebugFiles {
  const dir = mkdtempSync(join(parent, 'eval-runner-debug-'));
  const files = { dir, request: join(dir, 'request.json'), answer: join(dir, 'answer.json') };
  const context = { traceId: request.traceId, evaluationId: request.evaluationId, kind: request.kind };
  // A batch function is debugged with a batch of one: it is called as the run calls it, with lists.
  const line = batch ? { id: REQUEST_ID, batch: [{ prompt: request.prompt, ...context }] } : { id: REQUEST_ID, prompt: request.prompt, ...context };
  writeFileSync(files.request, JSON.stringify(line), { encoding: 'utf8', mode: 0o600 });
  return files;
}

export function removeDebugFiles(files: DebugFiles): void {
  rmSync(files.dir, { recursive: true, force: true });
}

interface LaunchInput {
  spec: Extract<TargetSpec, { type: 'python' | 'worker' }>;
  files: DebugFiles;
  /** The target's working folder (the workspace). */
  cwd: string | undefined;
  traceId: string;
  /** Tells this session apart from others (DEBUG_ID_KEY). */
  id: string;
  /** The names of the environment the debugger would pass on (the extension host's): the withheld ones are removed. */
  envNames: readonly string[];
  shim: string;
}

/** The launch configuration for one trace of this target. */
export function debugLaunch(input: LaunchInput): DebugLaunch {
  return input.spec.type === 'python' ? { kind: 'python', configuration: pythonLaunch({ ...input, spec: input.spec }) } : { kind: 'node', configuration: workerLaunch({ ...input, spec: input.spec }) };
}

function withheld(envNames: readonly string[]): string[] {
  return WITHHELD_ENV.filter((n) => envNames.includes(n));
}

/**
 * The Python Debugger's launch: the debug shim imports the user's file as the run's shim does and calls the function
 * once. justMyCode stops only in the user's code, and the rules keep the two shims out of it, so stepping out of the
 * function does not land in Eval Runner's frames.
 */
function pythonLaunch(input: LaunchInput & { spec: PythonTargetSpec }): Record<string, unknown> {
  const { spec, files, shim } = input;
  const fn = spec.function ?? DEFAULT_PYTHON_FUNCTION;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(fn)) throw new TypeError(`"${fn}" is not a Python function name.`);
  // debugpy's launcher merges `env` into the editor's environment and drops the variables set to null.
  const env: Record<string, string | null> = { PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' };
  for (const name of withheld(input.envNames)) env[name] = null;
  return {
    type: 'debugpy',
    request: 'launch',
    name: `Eval Runner: Debug Trace ${oneLine(input.traceId)}`,
    program: shim,
    args: [files.request, files.answer, spec.file, fn],
    python: spec.python || defaultPython(),
    ...(input.cwd ? { cwd: input.cwd } : {}),
    env,
    console: 'internalConsole',
    justMyCode: true,
    rules: [shim, join(shim, '..', 'evalRunnerShim.py')].map((path) => ({ path, include: false })),
    [DEBUG_ID_KEY]: input.id,
  };
}

/**
 * The JavaScript debugger's launch: the debug shim (Node) starts the worker command as the run does, sends it the one
 * request over the worker protocol and writes its reply. The debugger follows the shim's child processes, so the
 * worker's own breakpoints bind (JavaScript, or TypeScript through its source maps).
 */
function workerLaunch(input: LaunchInput & { spec: { type: 'worker'; command: string } }): Record<string, unknown> {
  const words = splitCommandLine(input.spec.command);
  if (words.length === 0) throw new TypeError('The worker command is empty.');
  // js-debug takes null as "remove this variable" from the environment it passes on.
  const env: Record<string, string | null> = {};
  for (const name of withheld(input.envNames)) env[name] = null;
  return {
    type: 'node',
    request: 'launch',
    name: `Eval Runner: Debug Trace ${oneLine(input.traceId)}`,
    program: input.shim,
    args: [input.files.request, input.files.answer, ...words],
    ...(input.cwd ? { cwd: input.cwd } : {}),
    env,
    console: 'internalConsole',
    autoAttachChildProcesses: true,
    skipFiles: ['<node_internals>/**', input.shim],
    [DEBUG_ID_KEY]: input.id,
  };
}

function oneLine(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}

/** The debug shim's reply, checked (undefined: the session ended before the call returned). */
export function readDebugAnswer(files: DebugFiles): DebugOutcome | undefined {
  if (!existsSync(files.answer)) return undefined;
  if (statSync(files.answer).size > MAX_ANSWER_FILE) return { error: 'The answer is larger than 64 MiB.' };
  return parseDebugAnswer(readFileSync(files.answer, 'utf8'));
}

/** One reply of the worker protocol (or a batch of one): an answer, the user's error, or a fatal start. */
export function parseDebugAnswer(text: string): DebugOutcome {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: `The debugged code replied with something that is not the worker protocol: "${quote(text)}"` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: `The reply is not a JSON object: "${quote(text)}"` };
  const reply = value as Record<string, unknown>;
  if (typeof reply.fatal === 'string') return { fatal: quote(reply.fatal, 4000) };
  const one = Array.isArray(reply.answers) ? answerOfBatch(reply.answers) : reply;
  if (typeof one.error === 'string') return { error: quote(one.error, 4000), ...(typeof one.traceback === 'string' ? { traceback: quote(one.traceback, 8000) } : {}) };
  if (typeof one.answer !== 'string') return { error: `The reply has no "answer" string: "${quote(text)}"` };
  const usage = readUsage(one.usage);
  return { answer: one.answer, ...(usage ? { usage } : {}) };
}

function answerOfBatch(answers: unknown[]): Record<string, unknown> {
  if (answers.length !== 1) return { error: `The batch function returned ${answers.length} answers for one prompt.` };
  const item = answers[0];
  return typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>) : { error: 'The batch function returned an answer that is not an object.' };
}

function quote(text: string, max = 200): string {
  const flat = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
