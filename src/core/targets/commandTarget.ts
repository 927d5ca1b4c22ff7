import { spawn } from 'node:child_process';
import { TargetError } from './target';
import type { Target } from './target';

export interface CommandTargetOptions {
  /** Run by /bin/sh -c; the prompt arrives on stdin, the answer is stdout. */
  command: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const MAX_OUTPUT = 64 * 1024 * 1024;
const STDERR_TAIL = 2000;

/** A shell command per prompt; killed (its whole process group) on time-out or cancel. */
export function createCommandTarget(options: CommandTargetOptions): Target {
  return {
    description: 'command',
    send: (prompt, call) =>
      new Promise<string>((resolve, reject) => {
        if (call.signal.aborted) {
          reject(call.signal.reason);
          return;
        }
        const child = spawn('/bin/sh', ['-c', options.command], {
          cwd: options.cwd,
          env: options.env ?? process.env,
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        });
        const out: Buffer[] = [];
        let outSize = 0;
        let errText = '';
        let ending: TargetError | Error | undefined;
        const kill = (why: TargetError | Error) => {
          ending ??= why;
          try {
            if (child.pid) process.kill(-child.pid, 'SIGKILL');
          } catch {
            child.kill('SIGKILL');
          }
        };
        const timer = setTimeout(
          () => kill(new TargetError(`The command did not finish within ${Math.round(call.timeoutMs / 1000)} s`, 'timeout')),
          call.timeoutMs,
        );
        const onAbort = () => kill(call.signal.reason instanceof Error ? call.signal.reason : new Error('cancelled'));
        call.signal.addEventListener('abort', onAbort, { once: true });
        child.stdout.on('data', (chunk: Buffer) => {
          outSize += chunk.length;
          if (outSize > MAX_OUTPUT) kill(new TargetError('The command wrote more than 64 MiB', 'failed', { retryable: false }));
          else out.push(chunk);
        });
        child.stderr.on('data', (chunk: Buffer) => {
          errText = (errText + chunk.toString('utf8')).slice(-STDERR_TAIL);
        });
        // A command that does not read its stdin is fine: ignore EPIPE.
        child.stdin.on('error', () => undefined);
        child.stdin.end(prompt);
        child.on('error', (error) => kill(new TargetError(`The command could not start: ${error.message}`, 'failed', { retryable: false })));
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          call.signal.removeEventListener('abort', onAbort);
          if (ending) return reject(ending);
          if (code !== 0) {
            const tail = errText.trim().split('\n').slice(-5).join('\n');
            return reject(
              new TargetError(`The command exited with ${code ?? signal}${tail ? `: ${tail}` : ''}`, 'failed', { retryable: true }),
            );
          }
          resolve(Buffer.concat(out).toString('utf8').replace(/\r?\n$/, ''));
        });
      }),
  };
}
