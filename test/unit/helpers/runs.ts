import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../../src/api/client';
import type { EvaluationKind } from '../../../src/api/kinds';
import { runEvaluation } from '../../../src/core/engine';
import type { EngineOptions, RunSummary } from '../../../src/core/engine';
import { journalPath, openJournal } from '../../../src/core/journal';
import type { Target } from '../../../src/core/targets/target';
import { TraceStore } from '../../../src/core/traceStore';
import type { Sandbox } from '../../../src/sandbox/server';
import { FAST_RETRY } from './servers';

export function tempDir(prefix = 'eval-runner-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
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

/** One engine run against the sandbox with a journal in stateDir, the way the CLI wires it. */
export async function engineRun(
  sandbox: Sandbox,
  kind: EvaluationKind,
  stateDir: string,
  target: Target,
  extra: Partial<EngineOptions> = {},
  token = sandbox.token,
): Promise<{ summary: RunSummary; store: TraceStore; tornTail: boolean }> {
  const client = createApiClient({ baseUrl: sandbox.baseUrl, token, retry: FAST_RETRY });
  const evaluationId = kind === 'benchmark' ? 1 : 2;
  const { journal, replay } = await openJournal(journalPath(stateDir, { origin: client.origin, kind, evaluationId }));
  const store = TraceStore.fromRecords(replay.records);
  try {
    const summary = await runEvaluation({ client, kind, evaluationId, target, journal, store, ...extra });
    return { summary, store, tornTail: replay.tornTail };
  } finally {
    await journal.close();
    await client.close();
  }
}
