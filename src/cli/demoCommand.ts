import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTarget, targetIdentity } from '../core';
import type { TargetSpec } from '../core';
import { startSandbox } from '../sandbox/server';
import { parseCommandArgs } from './args';
import { EXIT } from './exitCodes';
import type { ExitCode } from './exitCodes';
import { executeRun, interruptSignals } from './runCommand';

const ECHO: TargetSpec = { type: 'echo' };

export const DEMO_HELP = `Usage: eval-runner demo [--keep]

The whole loop offline: starts the sandbox in this process on a free port, runs evaluation 1
(benchmark) and evaluation 2 (robustness, waiting for its generation) with the echo target, waits
for the sandbox's evaluator and prints a summary with the Process Details URLs.
  --keep                      keep the sandbox running afterwards (Ctrl-C stops it)
`;

export async function demoCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const v = parseCommandArgs(argv, { keep: { type: 'boolean' } });
  if (v.help) {
    out.write(DEMO_HELP);
    return EXIT.ok;
  }
  const sandbox = await startSandbox({ port: 0, generationSeconds: 3, evaluationSeconds: 1 });
  const stateDir = await mkdtemp(join(tmpdir(), 'eval-runner-demo-'));
  const signals = interruptSignals(process.stderr);
  out.write(`Sandbox service on ${sandbox.baseUrl} (token ${sandbox.token}); journals in ${stateDir}\n\n`);
  const codes: ExitCode[] = [];
  try {
    for (const evaluation of sandbox.evaluations) {
      const { code } = await executeRun(
        {
          args: { baseUrl: sandbox.baseUrl, evaluationId: evaluation.evaluationId, kind: evaluation.kind },
          token: sandbox.token,
          target: createTarget(ECHO, {}, { connections: 8 }),
          identity: targetIdentity(ECHO),
          targetTimeoutMs: 60_000,
          concurrency: 8,
          stateDir,
          waitForGenerationMs: 60_000,
          onTargetError: 'fail',
          encoding: 'urlencoded',
          journal: true,
          json: false,
          label: `${evaluation.kind} evaluation ${evaluation.evaluationId}`,
        },
        { stdout: out, stderr: process.stderr, drainSignal: signals.drain.signal, signal: signals.hard.signal },
      );
      codes.push(code);
      if (code !== EXIT.ok) break;
    }
    // The sandbox's evaluator takes a moment; show the service's own verdict, as a user would check it.
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && sandbox.evaluations.some((e) => sandbox.summary(e.evaluationId)?.state !== 'Completed')) {
      await new Promise((r) => setTimeout(r, 200));
    }
    out.write('\nThe service now shows:\n');
    for (const e of sandbox.evaluations) {
      const s = sandbox.summary(e.evaluationId)!;
      out.write(
        `  evaluation ${e.evaluationId} (${e.kind}): ${s.state}, ${s.counts.Evaluated}/${s.traces} evaluated · Process Details: ${sandbox.baseUrl}/evaluations/${e.evaluationId}\n`,
      );
    }
    if (v.keep) {
      out.write('\nThe sandbox keeps running; press Ctrl-C to stop it.\n');
      await new Promise<void>((resolve) => signals.drain.signal.addEventListener('abort', () => resolve(), { once: true }));
    }
  } finally {
    signals.dispose();
    await sandbox.close();
    await rm(stateDir, { recursive: true, force: true });
  }
  const worst = codes.find((c) => c !== EXIT.ok) ?? EXIT.ok;
  return worst;
}
