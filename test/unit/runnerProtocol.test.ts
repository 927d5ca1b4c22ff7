import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import { createApiClient } from '../../src/api/client';
import type { ProxyConfig } from '../../src/api/proxy';
import { createTarget, EvaluationSession, hostRun } from '../../src/core';
import type { FollowedView, RefusedRun, RerunSubset, RunOptions, RunMode, RunProgress, RunSummary, TargetIdentity, TargetSecrets, TargetSpec } from '../../src/core';
import * as protocol from '../../src/protocol/runnerProtocol';
import { RUNNER_MESSAGES, RUNNER_PROTOCOL_VERSION } from '../../src/protocol/runnerProtocol';
import type { LmSendError, ProgressParams, RunViewParams, ProxyParams, RefusedParams, RerunSubsetParams, RunFinished, RunOptionsParams, StartParams, SummaryParams, TargetIdentityParams, TargetSecretsParams, TargetSpecParams } from '../../src/protocol/runnerTypes';
import { startedRun, targetSpecOf } from '../../src/runner/startParams';
import type { TargetError } from '../../src/core';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { tempDir } from './helpers/runs';

const ROOT = join(__dirname, '..', '..', '..');

/** true when A is assignable to B: a line below stops compiling when a core type no longer fits the protocol's. */
type Fits<A, B> = [A] extends [B] ? true : false;

// What the window sends, from the core's types: they fit the protocol's.
const windowSends: Array<true> = [
  true satisfies Fits<TargetSpec, TargetSpecParams>,
  true satisfies Fits<TargetSecrets, TargetSecretsParams>,
  true satisfies Fits<TargetIdentity, TargetIdentityParams>,
  true satisfies Fits<ProxyConfig, ProxyParams>,
  true satisfies Fits<RunOptions & { mode: RunMode; tool: string }, RunOptionsParams>,
  true satisfies Fits<TargetError['kind'], LmSendError['kind']>,
  true satisfies Fits<RerunSubset, RerunSubsetParams>,
  true satisfies Fits<RerunSubsetParams, RerunSubset>,
];
// What the runner sends, from the core's types, and what the window makes of it: the same both ways.
const runnerSends: Array<true> = [
  true satisfies Fits<RunProgress, ProgressParams>,
  true satisfies Fits<ProgressParams, RunProgress>,
  true satisfies Fits<Omit<RunSummary, 'error'>, SummaryParams>,
  true satisfies Fits<SummaryParams, Omit<RunSummary, 'error'>>,
  true satisfies Fits<RefusedRun, RefusedParams>,
  true satisfies Fits<RunFinished, Omit<RunSummary, 'error'> | Pick<RefusedRun, 'outcome' | 'message'>>,
  true satisfies Fits<FollowedView, RunViewParams>,
  true satisfies Fits<RunViewParams, FollowedView>,
];

// The protocol's fields, by name (the compiler holds each list to its type, no more and no less): a field the core
// adds to what it sends is seen below, where assignability alone would let it cross unseen.
const PROGRESS_FIELDS = {
  phase: true, total: true, counts: true, ratePerSecond: true, etaSeconds: true, elapsedMs: true, targetConcurrency: true, lastError: true,
  waitingReason: true, paused: true, hold: true, waitingFor: true, targetRateLimit: true, serviceRateLimit: true, batch: true, thisRun: true, cost: true,
} satisfies Record<keyof ProgressParams, true>;
const SUMMARY_FIELDS = {
  outcome: true, message: true, total: true, counts: true, submittedNow: true, targetCalls: true, rateLimitedCalls: true, failed: true,
  durationMs: true, runningMs: true, runId: true, planned: true, listChanges: true, holds: true, batch: true,
} satisfies Record<keyof SummaryParams, true>;

describe('the runner protocol: a contract of its own', () => {
  it("the core's types fit the protocol's messages (checked by the compiler, above)", () => {
    assert.equal(windowSends.length + runnerSends.length, 16);
  });

  it('every message is declared once with its kind and direction, and nothing else is a message', () => {
    const declared = Object.values(protocol)
      .map((value) => (value instanceof RequestType || value instanceof RequestType0 ? { method: value.method, kind: 'request' } : value instanceof NotificationType ? { method: value.method, kind: 'notification' } : undefined))
      .filter((m) => m !== undefined)
      .sort((a, b) => a.method.localeCompare(b.method));
    const listed = RUNNER_MESSAGES.map(({ method, kind }) => ({ method, kind })).sort((a, b) => a.method.localeCompare(b.method));
    assert.deepEqual(listed, declared);
    for (const m of RUNNER_MESSAGES) assert.match(m.direction, /^(window → runner|runner → window)$/, m.method);
  });

  it('docs/runner-protocol.md tells every message with its kind and direction, and no other, and the version', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'runner-protocol.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(evalRunner\/\w+)` \| (\w+) \| ([^|]+?) \|/gm)].map((m) => ({ method: m[1]!, kind: m[2]!, direction: m[3]! }));
    const sorted = (list: ReadonlyArray<{ method: string }>) => [...list].sort((a, b) => a.method.localeCompare(b.method));
    assert.deepEqual(sorted(rows), sorted(RUNNER_MESSAGES.map(({ method, kind, direction }) => ({ method, kind, direction }))));
    assert.equal(/^Protocol version: \*\*(\d+)\*\*$/m.exec(doc)?.[1], String(RUNNER_PROTOCOL_VERSION));
  });

  describe('a start message builds the core\'s run, hosted as the runner hosts it', function () {
    this.timeout(30_000);
    let sandbox: Sandbox;
    beforeEach(async () => {
      sandbox = await startSandbox({ port: 0, evaluationSeconds: 0 });
    });
    afterEach(() => sandbox.close());

    it('runs to the end; what it sends is declared by the protocol, field by field; the target and client are closed', async () => {
      const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token });
      const params: StartParams = {
        key: { origin: client.origin, kind: 'benchmark', evaluationId: 1 },
        baseUrl: sandbox.baseUrl,
        stateDir: tempDir(),
        label: 'test',
        token: sandbox.token,
        encoding: 'urlencoded',
        proxy: null,
        userAgent: 'eval-runner-test',
        target: { spec: { type: 'echo' }, secrets: {} },
        identity: { description: 'echo', fingerprint: 'test:echo', facts: {} },
        run: { mode: 'continue', holdAnswers: false, concurrency: 4, onTargetError: 'fail', waitForGenerationMs: 0, servicePatienceMs: 5_000, targetTimeoutMs: 10_000, tool: 'test' },
      };
      const session = new EvaluationSession(params.key, params.stateDir);
      const sent: object[] = [];
      let closed = 0;
      const summary = await hostRun(
        session,
        {
          client,
          targets: () => {
            const target = createTarget(targetSpecOf(params.target.spec), params.target.secrets, { connections: 4 });
            return { target: { ...target, send: target.send.bind(target), close: () => (closed++, Promise.resolve()) } };
          },
          ...startedRun(params),
          progressIntervalMs: 10,
          onProgress: (p) => sent.push(p),
        },
        ({ result }) => Promise.resolve(result),
      );
      assert.ok(summary && summary.outcome === 'completed', JSON.stringify(summary));
      assert.ok(summary.counts.submitted > 0);
      assert.equal(closed, 1, 'the target is closed once');
      await assert.rejects(client.listPrompts('benchmark', 1), 'the client is closed');
      for (const p of sent) for (const field of Object.keys(p)) assert.ok(field in PROGRESS_FIELDS, `progress.${field} is not declared by the protocol`);
      for (const field of Object.keys(summary)) assert.ok(field === 'error' || field in SUMMARY_FIELDS, `summary.${field} is not declared by the protocol`);
    });

    it("a start message's rerun subset is picked and run by the core: those traces alone, as a new run", async () => {
      const params: StartParams = {
        key: { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 },
        baseUrl: sandbox.baseUrl,
        stateDir: tempDir(),
        label: 'test',
        token: sandbox.token,
        encoding: 'urlencoded',
        proxy: null,
        userAgent: 'eval-runner-test',
        target: { spec: { type: 'echo' }, secrets: {} },
        identity: { description: 'echo', fingerprint: 'test:echo', facts: {} },
        run: { mode: 'continue', holdAnswers: false, concurrency: 4, onTargetError: 'fail', waitForGenerationMs: 0, servicePatienceMs: 5_000, targetTimeoutMs: 10_000, tool: 'test' },
      };
      const session = new EvaluationSession(params.key, params.stateDir);
      const host = (start: StartParams) =>
        hostRun(session, { client: createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token }), targets: () => ({ target: createTarget(targetSpecOf(start.target.spec), {}, { connections: 4 }) }), ...startedRun(start) }, (ran) => Promise.resolve(ran));
      await host(params);
      const first = session.store.runs[0]!.runId;
      const ids = [...session.store.traces.keys()].slice(1, 3);
      const ran = await host({ ...params, run: { ...params.run, subset: { ids: [...ids, 'no-such-trace'] } } });
      assert.deepEqual(ran.rerun, { ids, unknown: 1, previousRun: first }, 'the runner picked the traces from the journal');
      assert.ok(ran.result && ran.result.outcome === 'completed', JSON.stringify(ran.result));
      assert.equal(ran.result.targetCalls, 2, 'those traces alone went to the target');
      assert.equal(session.store.runs.length, 2, 'as a new run');
      assert.equal(session.store.runs[1]!.mode, 'reuse', "without the question of another target's answers");
    });

    it('the target kind a start message names must be one this runner knows', () => {
      assert.throws(() => targetSpecOf({ type: 'teleport' }), /This runner has no target of kind "teleport"/);
      assert.throws(() => targetSpecOf({ type: 'manual' }), /no target of kind "manual"/);
      const run = startedRun({ identity: { description: 'd', fingerprint: 'f', facts: {} }, run: { mode: 'continue', only: ['a', 'b'], reuseFetchedPrompts: true, tool: 't' } } as StartParams);
      assert.deepEqual(run, { identity: { description: 'd', fingerprint: 'f', facts: {} }, mode: 'continue', tool: 't', only: new Set(['a', 'b']), reuseFetchedPrompts: true });
    });
  });
});
