import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTarget, runOptions, targetIdentity } from '../core';
import type { TargetSpec } from '../core';
import { startSandbox } from '../sandbox/server';
import { parseCommandArgs } from './args';
import { EXIT } from './exitCodes';
import type { ExitCode } from './exitCodes';
import { DRAIN_WORDS, interruptSignals } from './interruptSignals';
import { executeRun } from './runCommand';

const ECHO: TargetSpec = { type: 'echo' };

export const DEMO_HELP = `Usage: eval-runner demo [--keep]

The whole loop offline: starts the sandbox in this process on a free port, runs evaluation 1
(benchmark) and evaluation 2 (robustness, waiting for its generation) with the echo target, waits
for the sandbox's evaluator and prints a summary with the service's Process Details URLs. Its
journals go to a temporary folder, removed when the demo ends; nothing else is written.
  --keep                      keep the sandbox and the journals until Ctrl-C, and print commands to try
`;

export async function demoCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const v = parseCommandArgs(argv, { keep: { type: 'boolean' } });
  if (v.help) {
    out.write(DEMO_HELP);
    return EXIT.ok;
  }
  const sandbox = await startSandbox({ port: 0, generationSeconds: 3, evaluationSeconds: 1 });
  const stateDir = await mkdtemp(join(tmpdir(), 'eval-runner-demo-'));
  let runsOver = false;
  const signals = interruptSignals(process.stderr, () => (runsOver ? "Stopping the sandbox and removing the demo's journals." : DRAIN_WORDS));
  out.write(
    `Sandbox service on ${sandbox.baseUrl} (token ${sandbox.token}); journals in ${stateDir} (${v.keep ? 'kept until Ctrl-C' : 'a temporary folder, removed when the demo ends'})\n\n`,
  );
  const codes: ExitCode[] = [];
  try {
    for (const evaluation of sandbox.evaluations) {
      const { code } = await executeRun(
        {
          args: { baseUrl: sandbox.baseUrl, evaluationId: evaluation.evaluationId, kind: evaluation.kind },
          token: sandbox.token,
          target: createTarget(ECHO, {}, { connections: 8 }),
          identity: targetIdentity(ECHO),
          ...runOptions({ targetTimeoutSeconds: 60, waitForGenerationSeconds: 60 }),
          stateDir,
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
    out.write(demoNextSteps(sandbox.baseUrl, sandbox.token, stateDir, v.keep === true));
    runsOver = true;
    if (v.keep) {
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

/**
 * What the demo leaves behind and what to try next: the journals are removed unless --keep, in which case the
 * commands shown run against the demo's own sandbox and journals (until Ctrl-C).
 */
export function demoNextSteps(baseUrl: string, token: string, stateDir: string, keep: boolean): string {
  const svc = `--base-url ${baseUrl} --evaluation 1 --kind benchmark --state-dir ${stateDir}`;
  if (keep) {
    return `
The sandbox and the journals in ${stateDir} stay until you press Ctrl-C. In another terminal, try:
  node dist/cli.js status ${svc}
  node dist/cli.js report ${svc} --out report.html
  EVAL_RUNNER_TOKEN=${token} node dist/cli.js run ${svc} --target echo --fresh
(status and report read the journal: no token; a run talks to the service.)
`;
  }
  return `
Nothing was kept: the journals in ${stateDir} are removed now, and the sandbox stops.
Next:
  node dist/cli.js demo --keep           the same, then the sandbox and journals stay for status and report
  node dist/cli.js sandbox               a sandbox of your own; it prints a run command ready to paste
  VS Code: Eval Runner view → Try the Local Sandbox; your own code as the target: docs/targets.md
`;
}
