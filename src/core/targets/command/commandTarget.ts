import { spawn } from 'node:child_process';
import { abortReason } from '../../../api/errors';
import { killTree, shellInvocation, treeSpawnOptions } from '../processes';
import { shellNotFoundText, spawnErrorText } from '../spawnErrors';
import { TargetError } from '../target';
import type { Target } from '../target';
import { SERVICE_TOKEN_ENV } from '../variableOwners';

export interface CommandTargetOptions {
  /** Run by the platform's shell (/bin/sh -c; %ComSpec% /d /s /c on Windows); prompt on stdin, answer on stdout. */
  command: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Further variables to keep from the command: the ones holding this run's keys and header secrets. */
  withhold?: readonly string[];
}

/**
 * Variables a command never sees, whatever the run: the service token and the conventional model key. A
 * command that prints its environment would otherwise submit them to the service as its answer.
 */
export const WITHHELD_ENV = [SERVICE_TOKEN_ENV, 'OPENAI_API_KEY'] as const;

export function commandEnv(env: NodeJS.ProcessEnv, withhold: readonly string[] = []): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of [...WITHHELD_ENV, ...withhold]) delete out[name];
  return out;
}

const MAX_OUTPUT = 64 * 1024 * 1024;
const STDERR_TAIL = 2000;

/** A shell command per prompt; killed (its whole process tree) on time-out or cancel. */
export function createCommandTarget(options: CommandTargetOptions): Target {
  const env = commandEnv(options.env ?? process.env, options.withhold);
  return {
    description: 'command',
    local: true,
    send: (prompt, call) =>
      new Promise<string>((resolve, reject) => {
        if (call.signal.aborted) {
          reject(abortReason(call.signal));
          return;
        }
        const shell = shellInvocation(options.command);
        const child = spawn(shell.file, shell.args, {
          cwd: options.cwd,
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
          windowsVerbatimArguments: shell.verbatim,
          ...treeSpawnOptions(),
        });
        const out: Buffer[] = [];
        let outSize = 0;
        let errText = '';
        let ending: TargetError | Error | undefined;
        const kill = (why: TargetError | Error) => {
          ending ??= why;
          killTree(child);
        };
        const timer = setTimeout(
          () => kill(new TargetError(`The command did not finish within ${Math.round(call.timeoutMs / 1000)} s`, 'timeout')),
          call.timeoutMs,
        );
        const onAbort = () => kill(call.signal.reason instanceof Error ? call.signal.reason : new Error('cancelled'));
        call.signal.addEventListener('abort', onAbort, { once: true });
        child.stdout.on('data', (chunk: Buffer) => {
          outSize += chunk.length;
          if (outSize > MAX_OUTPUT) kill(new TargetError('The command wrote more than 64 MiB', 'failed', { retryable: false, cause: 'answer too large' }));
          else out.push(chunk);
        });
        child.stderr.on('data', (chunk: Buffer) => {
          errText = (errText + chunk.toString('utf8')).slice(-STDERR_TAIL);
        });
        // A command that does not read its stdin is fine: ignore EPIPE.
        child.stdin.on('error', () => undefined);
        child.stdin.end(prompt);
        child.on('error', (error) => kill(new TargetError(`The command could not start: ${spawnErrorText(error, shell.file, { cwd: options.cwd, env })}`, 'failed', { retryable: false, cause: 'command did not start' })));
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          call.signal.removeEventListener('abort', onAbort);
          if (ending) return reject(ending);
          if (code !== 0) {
            const tail = errText.trim().split('\n').slice(-5).join('\n');
            // 127 is a POSIX shell's "not found": where it looked is what the user needs next.
            const words = code === 127 && process.platform !== 'win32' ? `, ${shellNotFoundText(env)}` : '';
            return reject(
              new TargetError(`The command exited with ${code ?? signal}${words}${tail ? `: ${tail}` : ''}`, 'failed', {
                retryable: true,
                cause: `command exited with ${code ?? signal}`,
              }),
            );
          }
          resolve(Buffer.concat(out).toString('utf8').replace(/\r?\n$/, ''));
        });
      }),
  };
}
