import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnErrorText } from '../spawnErrors';

/**
 * Debug Trace for a worker target: `node debugWorker.js REQUEST ANSWER PROGRAM ARGS…` (dist/debugWorker.js), launched
 * by the editor's JavaScript debugger, which follows the worker it starts. It sends the one request line in REQUEST
 * to the worker over the worker protocol (the prompt travels in that file, never in argv), writes the reply line with
 * that id to ANSWER, then ends the worker. No time limit: the user may sit at a breakpoint as long as they like.
 */
export function runDebugWorker(argv: readonly string[]): void {
  const [requestPath, answerPath, program, ...args] = argv;
  if (!requestPath || !answerPath || !program) {
    process.stderr.write('usage: debugWorker.js REQUEST ANSWER PROGRAM [ARGS…]\n');
    process.exitCode = 2;
    return;
  }
  const request = JSON.parse(readFileSync(requestPath, 'utf8')) as { id: number };
  const write = (reply: unknown) => writeFileSync(answerPath, JSON.stringify(reply), { encoding: 'utf8', mode: 0o600 });
  // The worker inherits this environment: the debugger's bootloader in it is what attaches to the worker.
  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
  // Stopped (the debugger's Stop, a signal) or ending: the worker goes with this shim, never left behind. 'exit' is
  // the path on Windows, where no SIGTERM comes.
  process.once('exit', () => child.kill());
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(signal, () => {
      child.kill();
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGHUP' ? 1 : 15));
    });
  }
  let done = false;
  const finish = (reply: unknown) => {
    if (done) return;
    done = true;
    write(reply);
    child.stdin.end();
    // A worker serves until its stdin closes; one that does not leave then is ended.
    setTimeout(() => child.kill(), 2000).unref();
  };
  child.on('error', (error) => finish({ fatal: `The worker could not start: ${spawnErrorText(error, program)}` }));
  // 'close': after the worker's output is read to its end, so a reply written just before exiting counts.
  child.on('close', (code, signal) => finish({ error: `The worker ${code !== null ? `exited with code ${code}` : `was ended by ${signal}`} before it answered.` }));
  child.stdin.on('error', () => undefined);
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      const message = protocolLine(line);
      if (message?.id === request.id || typeof message?.fatal === 'string') finish(message);
      // Anything else (a ready line, the worker's own prints) shows in the debug console.
      else if (line && message?.ready !== true) process.stdout.write(`${line}\n`);
    }
  });
  child.stdin.write(`${JSON.stringify(request)}\n`);
}

function protocolLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

if (require.main === module) runDebugWorker(process.argv.slice(2));
