import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const CLI = join(__dirname, '..', '..', '..', '..', 'dist', 'cli.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would; `during` may act on the live child (signals); `cwd`: the folder it runs in. */
export function cli(
  args: string[],
  env: Record<string, string | undefined> = {},
  during?: (child: ChildProcess) => void,
  stdin?: string,
  cwd?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      ...(cwd ? { cwd } : {}),
      env: { ...process.env, EVAL_RUNNER_TOKEN: undefined, EVAL_RUNNER_BASE_URL: undefined, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(stdin ?? '');
    during?.(child);
  });
}
