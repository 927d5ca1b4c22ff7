import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../../src/api/client';
import type { EvaluationKind } from '../../../src/api/evaluationKinds';
import type { RunSummary } from '../../../src/core/run/runSummary';
import { EvaluationSession } from '../../../src/core/session/session';
import type { SessionRunOptions } from '../../../src/core/session/session';
import type { Target } from '../../../src/core/targets/target';
import type { TraceStore } from '../../../src/core/store/traceStore';
import type { StartParams } from '../../../src/protocol/runnerProtocol';
import type { Sandbox } from '../../../src/sandbox/server';
import { FAST_RETRY } from './servers';

/** The folders tempDir made, removed when the test process exits: each suite's run left some hundreds in /tmp. */
const made: string[] = [];

export function tempDir(prefix = 'eval-runner-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (made.length === 0) process.once('exit', removeMade);
  made.push(dir);
  return dir;
}

function removeMade(): void {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // a folder a test left unreadable: the system's temporary folder keeps it
    }
  }
}

/** A target whose behaviour the test scripts; it counts calls per prompt. */
export function scriptedTarget(fn: (prompt: string, call: number, signal: AbortSignal) => Promise<string> | string): Target & {
  calls: Map<string, number>;
  total(): number;
} {
  const calls = new Map<string, number>();
  return {
    description: 'scripted',
    calls,
    total: () => [...calls.values()].reduce((a, b) => a + b, 0),
    async send(prompt, options) {
      const n = (calls.get(prompt) ?? 0) + 1;
      calls.set(prompt, n);
      return fn(prompt, n, options.signal);
    },
  };
}

/**
 * One run against the sandbox with a journal in stateDir, through the core's evaluation handle (the one way
 * in that the CLI and the editor use too). The target's identity is its description.
 */
export async function engineRun(
  sandbox: Sandbox,
  kind: EvaluationKind,
  stateDir: string,
  target: Target,
  extra: Partial<Omit<SessionRunOptions, 'client' | 'target' | 'identity'>> = {},
  token = sandbox.token,
): Promise<{ summary: RunSummary; store: TraceStore; tornTail: boolean }> {
  const client = createApiClient({ baseUrl: sandbox.baseUrl, token, retry: FAST_RETRY });
  const evaluationId = kind === 'benchmark' ? 1 : 2;
  const session = new EvaluationSession({ origin: client.origin, kind, evaluationId }, stateDir);
  let tornTail = false;
  try {
    const summary = await session.run({
      client,
      target,
      identity: { description: target.description, fingerprint: `test:${target.description}`, facts: { target: target.description } },
      onReplay: (replay) => (tornTail = replay.tornTail),
      ...extra,
    });
    if (summary.outcome === 'targetChanged') throw new Error(summary.message);
    return { summary, store: session.store, tornTail };
  } finally {
    await client.close();
  }
}

/**
 * A runner's start for one of the sandbox's evaluations, as a window sends it: the tests' defaults, any part changed
 * by `over` (`run` field by field).
 */
export function runnerStartParams(sandbox: Sandbox, stateDir: string, key: StartParams['key'], target: StartParams['target'], over: Partial<Omit<StartParams, 'run'>> & { run?: Partial<StartParams['run']> } = {}): StartParams {
  const { run, ...rest } = over;
  return {
    key,
    baseUrl: sandbox.baseUrl,
    stateDir,
    label: 'test',
    token: sandbox.token,
    encoding: 'urlencoded',
    proxy: null,
    userAgent: 'eval-runner-test',
    target,
    identity: { description: target.spec.type, fingerprint: `test:${target.spec.type}`, facts: {} },
    run: { mode: 'continue', holdAnswers: false, concurrency: 4, onTargetError: 'fail', waitForGenerationMs: 0, servicePatienceMs: 5_000, targetTimeoutMs: 10_000, tool: 'test', ...run },
    ...rest,
  };
}
