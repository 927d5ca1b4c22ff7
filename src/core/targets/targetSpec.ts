import type { ProxyConfig } from '../../api/proxy';
import { createHash } from 'node:crypto';
import { createCommandTarget } from './commandTarget';
import { createEchoTarget } from './echoTarget';
import { createHttpTarget } from './httpTarget';
import { createOpenAiTarget } from './openaiTarget';
import type { Target } from './target';
import { commandEnv } from './commandTarget';
import { splitCommandLine } from './processes';
import { DEFAULT_PYTHON_FUNCTION, createPythonTarget, defaultPython, defaultWorkers, describePython, pythonFileHash, pythonFilePath } from './pythonTarget';
import { basename, relative } from 'node:path';
import type { PythonTargetSpec } from './pythonTarget';
import { createWorkerTarget } from './workerTarget';

/**
 * What a user chose as the target, as both front ends parse it (CLI flags, editor settings): everything
 * that decides the answers, and nothing secret. Keys and header values travel apart, in TargetSecrets.
 */
export type TargetSpec =
  | { type: 'echo' }
  | { type: 'openai'; baseUrl: string; model: string; systemPrompt?: string; temperature?: number; maxTokens?: number; stream?: boolean }
  | { type: 'http'; url: string; method?: string; bodyTemplate?: string; answerPath: string; usagePath?: string; ssePath?: string }
  | { type: 'command'; command: string }
  | PythonTargetSpec
  /** A long-lived command speaking the worker protocol (JSON lines), started `workers` times. */
  | { type: 'worker'; command: string; workers?: number }
  | { type: 'vscode-lm'; model?: string };

export interface TargetSecrets {
  /** The model key (openai). */
  apiKey?: string;
  /** Extra request headers (openai, http); their values are treated as secrets. */
  headers?: Record<string, string>;
}

export interface TargetOptions {
  connections: number;
  /** Working directory of a command target. */
  cwd?: string;
  /** Variables a command target must not see (the ones holding this run's secrets). */
  withhold?: readonly string[];
  /** Said with a 401 or 403 from a model endpoint: how to give it the right key. */
  authHint?: string;
  /** The VS Code chat model target, which only the extension can build. */
  lm?: (model: string | undefined) => Target;
  /** The proxy for HTTP targets; undefined: the environment's; null: none. */
  proxy?: ProxyConfig | null;
  /** Where long-lived workers' stderr goes (python, worker). */
  onLog?: (level: 'info' | 'warn', message: string) => void;
}

/** Who answered, for people (no secret) and for comparison (a fingerprint of what changes answers). */
export interface TargetIdentity {
  description: string;
  fingerprint: string;
  /**
   * What changes answers, named for people (journaled with the run, so that a conflict can say what differs).
   * Long values are shortened to a prefix and a hash; never a secret.
   */
  facts: Record<string, string>;
  /** Fingerprints an earlier version gave the same target (a python file named by its path from the working folder). */
  aliases?: string[];
}

/** The one place a target is built from a spec, for the CLI, the extension and the tests. */
export function createTarget(spec: TargetSpec, secrets: TargetSecrets, options: TargetOptions): Target {
  switch (spec.type) {
    case 'echo':
      return createEchoTarget();
    case 'openai':
      return createOpenAiTarget({
        ...spec,
        apiKey: secrets.apiKey,
        ...(secrets.headers ? { headers: secrets.headers } : {}),
        ...(options.authHint ? { authHint: options.authHint } : {}),
        connections: options.connections,
        ...(options.proxy !== undefined ? { proxy: options.proxy } : {}),
      });
    case 'http':
      return createHttpTarget({
        ...spec,
        ...(secrets.headers ? { headers: secrets.headers } : {}),
        connections: options.connections,
        ...(options.proxy !== undefined ? { proxy: options.proxy } : {}),
      });
    case 'command':
      return createCommandTarget({
        command: spec.command,
        ...(options.cwd ? { cwd: options.cwd } : {}),
        ...(options.withhold ? { withhold: options.withhold } : {}),
      });
    case 'python':
      return createPythonTarget(spec, {
        concurrency: options.connections,
        ...(options.cwd ? { cwd: options.cwd } : {}),
        ...(options.withhold ? { withhold: options.withhold } : {}),
        ...(options.onLog ? { onLog: options.onLog } : {}),
      });
    case 'worker': {
      const [program, ...args] = splitCommandLine(spec.command);
      if (!program) throw new TypeError('The worker command is empty.');
      return createWorkerTarget({
        what: 'The worker',
        description: `worker: ${spec.command}`,
        program,
        args,
        workers: spec.workers ?? defaultWorkers(options.connections),
        ...(options.cwd ? { cwd: options.cwd } : {}),
        env: commandEnv(process.env, options.withhold),
        ...(options.onLog ? { onLog: options.onLog } : {}),
      });
    }
    case 'vscode-lm':
      if (!options.lm) throw new TypeError('The VS Code chat model target exists only in the editor.');
      return options.lm(spec.model);
  }
}

/** An endpoint as it may be shown and compared: origin and path, the query's names but never its values. */
function endpoint(url: string): string {
  const u = new URL(url);
  const names = [...new Set([...u.searchParams.keys()])].sort();
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}${names.length ? `?${names.map((n) => `${n}=…`).join('&')}` : ''}`;
}

/** `cwd`: where a python target's relative file is read from (its content's hash is part of the identity). */
export function targetIdentity(spec: TargetSpec, cwd?: string): TargetIdentity {
  const parts: Array<string | number | undefined> = [spec.type];
  const facts: Record<string, string | number | undefined> = { kind: spec.type };
  let description: string;
  let aliases: string[] | undefined;
  switch (spec.type) {
    case 'echo':
      description = 'echo';
      break;
    case 'openai': {
      const details = [
        spec.temperature !== undefined ? `temperature ${spec.temperature}` : undefined,
        spec.maxTokens !== undefined ? `max tokens ${spec.maxTokens}` : undefined,
        spec.systemPrompt ? 'system prompt' : undefined,
      ].filter(Boolean);
      description = `openai: ${spec.model} @ ${endpoint(spec.baseUrl)}${details.length ? `, ${details.join(', ')}` : ''}`;
      parts.push(endpoint(spec.baseUrl), spec.model, spec.systemPrompt, spec.temperature, spec.maxTokens);
      Object.assign(facts, { endpoint: endpoint(spec.baseUrl), model: spec.model, 'system prompt': spec.systemPrompt, temperature: spec.temperature, 'max tokens': spec.maxTokens });
      break;
    }
    case 'http': {
      const method = (spec.method ?? 'POST').toUpperCase();
      description = `http: ${method} ${endpoint(spec.url)}, answer at ${spec.ssePath ? `${spec.ssePath} (streamed)` : spec.answerPath}`;
      parts.push(method, endpoint(spec.url), spec.bodyTemplate, spec.answerPath, ...(spec.ssePath ? [spec.ssePath] : []));
      Object.assign(facts, { method, endpoint: endpoint(spec.url), 'body template': spec.bodyTemplate, 'answer path': spec.answerPath, 'stream path': spec.ssePath });
      break;
    }
    case 'command':
      description = `command: ${spec.command}`;
      parts.push(spec.command);
      facts.command = spec.command;
      break;
    case 'python': {
      description = describePython(spec, cwd);
      const file = pythonFilePath(spec, cwd);
      // A batch size changes how the function is called (lists of prompts): another target. Unset adds nothing, so the
      // fingerprints of runs before batches stay the same.
      const batch = spec.batchSize !== undefined ? [`batch ${spec.batchSize}`] : [];
      const rest = [spec.function ?? DEFAULT_PYTHON_FUNCTION, spec.python ?? defaultPython(), pythonFileHash(spec, cwd), ...batch];
      // The file by its name and content, never by where the command was run from.
      parts.push(basename(file), ...rest);
      aliases = [fingerprintOf([spec.type, relative(cwd ?? process.cwd(), file).split('\\').join('/'), ...rest])];
      Object.assign(facts, { file: basename(file), function: rest[0], interpreter: rest[1], "file's content": rest[2], 'batch size': spec.batchSize });
      break;
    }
    case 'worker':
      description = `worker: ${spec.command}`;
      parts.push(spec.command);
      facts.command = spec.command;
      break;
    case 'vscode-lm':
      description = `vscode-lm: ${spec.model ?? 'any chat model'}`;
      parts.push(spec.model);
      facts.model = spec.model ?? 'any chat model';
      break;
  }
  return { description, fingerprint: fingerprintOf(parts), facts: shownFacts(facts), ...(aliases ? { aliases } : {}) };
}

/** The facts that are set, each at most 80 characters (a longer one: its start and a hash of the whole). */
function shownFacts(facts: Record<string, string | number | undefined>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(facts)) {
    if (value === undefined) continue;
    const text = String(value);
    shown[name] = text.length <= 80 ? text : `${text.slice(0, 60)}… (sha256 ${createHash('sha256').update(text).digest('hex').slice(0, 8)})`;
  }
  return shown;
}

/** The facts that differ between two identities, in words ("file's content: cd61be → 9a0b11"). */
export function identityDifferences(before: Readonly<Record<string, string>>, now: Readonly<Record<string, string>>): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(now)])];
  return names.filter((n) => before[n] !== now[n]).map((n) => `${n}: ${before[n] ?? '(not set)'} → ${now[n] ?? '(not set)'}`);
}

function fingerprintOf(parts: ReadonlyArray<string | number | undefined>): string {
  return createHash('sha256').update(JSON.stringify(parts.map((p) => p ?? null))).digest('hex').slice(0, 16);
}

/**
 * Runs recorded before runs had identities name their target only by a short description. Only "echo" says
 * all there is to say; any other is a target of unknown settings, never the same as one named now.
 */
export function legacyFingerprint(description: string | undefined): string {
  return description === 'echo' ? targetIdentity({ type: 'echo' }).fingerprint : `legacy:${description ?? 'unknown'}`;
}
