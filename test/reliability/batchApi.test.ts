import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { EvaluationSession } from '../../src/core/session/session';
import { journalPath, openJournal, parseJournal } from '../../src/core/journal/journal';
import type { RunProgress } from '../../src/core/run/runState';
import { createBatchTarget } from '../../src/core/targets/openai/openaiBatch';
import { createTarget } from '../../src/core/targets/targetSpec';
import type { TargetSpec } from '../../src/core/targets/targetSpec';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import { engineRun, tempDir } from '../unit/helpers/runs';

const TRACES = 30;

/** One run through the Batch API of the sandbox (its echo model answers each prompt with itself). */
async function batchRun(
  sandbox: Sandbox,
  stateDir: string,
  spec: Partial<Extract<TargetSpec, { type: 'openai' }>> = {},
  maxRequests = 50_000,
  stopWhen?: (p: RunProgress) => boolean,
) {
  const full: TargetSpec = { type: 'openai', baseUrl: `${sandbox.baseUrl}/v1`, model: 'gpt-4o-mini', batch: true, ...spec };
  const options = { connections: 8, batch: { limits: { maxRequests, maxBytes: 1024 * 1024 }, pollMs: 30 } };
  const target = createTarget(full, { apiKey: 'sk-batch-test' }, options);
  const batch = createBatchTarget(full, { apiKey: 'sk-batch-test' }, options)!;
  const progress: RunProgress[] = [];
  try {
    const drain = new AbortController();
    const onProgress = (p: RunProgress) => {
      progress.push(p);
      if (stopWhen?.(p)) drain.abort();
    };
    const run = await engineRun(sandbox, 'benchmark', stateDir, target, { batch, progressIntervalMs: 10, onProgress, drainSignal: drain.signal });
    return { ...run, progress, batch };
  } finally {
    await batch.close();
  }
}

/** The sandbox's prompts by trace id (its seed). */
function promptsOf(): Map<string, string> {
  return new Map(seedPrompts('benchmark', TRACES).map((p) => [p.traceId, p.content]));
}

const batchesCreated = (sandbox: Sandbox) => sandbox.stats.requests.get('POST /v1/batches') ?? 0;

/** Every trace's answer at the service is its own prompt (the echo model's), whatever order the output came in. */
function assertAllAnswered(sandbox: Sandbox, except: readonly string[] = []): void {
  const prompts = promptsOf();
  assert.equal(prompts.size, TRACES);
  for (const [traceId, prompt] of prompts) {
    if (except.includes(traceId)) continue;
    assert.equal(sandbox.answerOf(1, traceId), prompt, `trace ${traceId} got its own answer`);
  }
}

describe('the Batch API target against the sandbox', function () {
  this.timeout(60_000);
  let sandbox: Sandbox | undefined;
  const start = async (options: SandboxOptions = {}) => (sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, batchDelayMs: 400, ...options }));
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('matches shuffled output lines to their traces by custom_id, submits every answer, and shows the batch state and the saving', async () => {
    const s = await start();
    const { summary, progress } = await batchRun(s, tempDir());
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.equal(summary.counts.submitted, TRACES);
    assertAllAnswered(s);
    assert.equal(batchesCreated(s), 1);
    assert.equal(s.stats.modelCalls, 0, 'no live call');
    const states = new Set(progress.map((p) => p.batch?.state).filter(Boolean));
    assert.ok(states.has('in_progress'), `progress showed the batch in progress (saw ${[...states].join(', ')})`);
    assert.ok(summary.batch && summary.batch.promptTokens > 0 && summary.batch.savedUsd! > 0, JSON.stringify(summary.batch));
  });

  it('sends 5xx error-file lines again in a new batch and fails a 4xx line with the API\'s words', async () => {
    const prompts = [...promptsOf().values()];
    const s = await start({
      batchFaults: {
        line: (prompt, batch) =>
          prompt === prompts[3] && batch === 1 ? { status: 500, message: 'The server had an error.' }
          : prompt === prompts[5] ? { status: 400, message: "Invalid 'messages[0].content': string too long (with key sk-batch-test)." }
          : undefined,
      },
    });
    const { summary, store } = await batchRun(s, tempDir());
    assert.equal(summary.outcome, 'failedTraces');
    assert.equal(batchesCreated(s), 2, 'the 5xx line went again in a second batch (the 4xx one did not)');
    assert.equal(summary.failed.length, 1);
    assert.match(summary.failed[0]!.reason, /HTTP 400.*string too long \(with key \[redacted\]\)/);
    const refusedId = summary.failed[0]!.traceId;
    assert.equal(store.get(refusedId)?.prompt, prompts[5]);
    assertAllAnswered(s, [refusedId]);
  });

  it("fails a line whose error code carries a terminal's escapes with the code cleaned: no control character, redacted, capped", async () => {
    const prompts = [...promptsOf().values()];
    const hostile = `\u001b]0;owned\u0007bad_\u001b[2J\u202ecode\r\nsk-batch-test${'x'.repeat(200)}`;
    const s = await start({ batchFaults: { line: (prompt) => (prompt === prompts[2] ? { code: hostile, message: 'Refused \u001b[31mred\u001b[0m.' } : undefined) } });
    const { summary } = await batchRun(s, tempDir());
    assert.equal(summary.failed.length, 1, summary.message);
    const reason = summary.failed[0]!.reason;
    assert.match(reason, /said \]0;owned bad_ \[2J code \[redacted\]x+…: Refused \[31mred \[0m\./);
    assert.ok(!/[\u0000-\u001f\u007f-\u009f\u202e]/.test(reason), JSON.stringify(reason));
    assert.ok(/said (.*?):/.exec(reason)![1]!.length <= 60, reason);
  });

  it('sends the unfinished requests of an expired batch again, and only those', async () => {
    const s = await start({ batchFaults: { expire: (batch) => (batch === 1 ? 10 : undefined) } });
    const { summary, store } = await batchRun(s, tempDir());
    assert.equal(summary.outcome, 'completed', summary.message);
    assertAllAnswered(s);
    assert.equal(batchesCreated(s), 2);
    const batches = [...store.batches.values()];
    assert.deepEqual(batches.map((b) => [b.ids.length, b.end]), [[30, 'expired'], [20, 'completed']]);
  });

  it('splits more traces than one file may hold into several batches', async () => {
    const s = await start();
    const { summary, store } = await batchRun(s, tempDir(), {}, 7);
    assert.equal(summary.outcome, 'completed', summary.message);
    assertAllAnswered(s);
    assert.equal(batchesCreated(s), 5);
    assert.deepEqual([...store.batches.values()].map((b) => b.ids.length), [7, 7, 7, 7, 2]);
  });

  it('with --batch-fallback live, calls the model live for a request the batch failed for a passing reason', async () => {
    const prompts = [...promptsOf().values()];
    const s = await start({ batchFaults: { line: (prompt) => (prompt === prompts[3] ? { status: 503, message: 'overloaded' } : undefined) } });
    const { summary } = await batchRun(s, tempDir(), { batchFallback: 'live' });
    assert.equal(summary.outcome, 'completed', summary.message);
    assertAllAnswered(s);
    assert.equal(batchesCreated(s), 1);
    assert.equal(s.stats.modelCalls, 1);
    assert.equal(s.stats.modelCallsByPrompt.get(prompts[3]!), 1);
  });

  it('a run stopped between creating a batch and journaling its id finds that batch by its file, and creates none', async () => {
    const s = await start();
    const stateDir = tempDir();
    // What the stopped run did: the file uploaded and journaled with its traces, the batch created, its id not journaled.
    const batch = createBatchTarget({ type: 'openai', baseUrl: `${s.baseUrl}/v1`, model: 'gpt-4o-mini', batch: true }, {}, { connections: 1 })!;
    const signal = new AbortController().signal;
    const items = seedPrompts('benchmark', TRACES);
    try {
      const file = await batch.api.upload(Buffer.from(items.map((p, i) => `${batch.api.line(`t${i}`, p.content)}\n`).join('')), signal);
      await batch.api.create(file, signal);
      mkdirSync(dirname(journalPath(stateDir, { origin: s.baseUrl, kind: 'benchmark', evaluationId: 1 })), { recursive: true });
      const { journal } = await openJournal(journalPath(stateDir, { origin: s.baseUrl, kind: 'benchmark', evaluationId: 1 }));
      await journal.append({ t: 'batch', at: Date.now(), file, ids: items.map((p) => p.traceId) });
      await journal.close();
    } finally {
      await batch.close();
    }
    assert.equal(batchesCreated(s), 1);
    const { summary } = await batchRun(s, stateDir);
    assert.equal(summary.outcome, 'completed', summary.message);
    assert.equal(batchesCreated(s), 1, 'the batch was found by its input file, not created again');
    assertAllAnswered(s);
  });

  it('abandons an open batch at the provider: cancelled there, and the next run sends its traces in a new batch', async () => {
    const options: SandboxOptions = { port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, batchDelayMs: 10_000 };
    const s = (sandbox = await startSandbox(options));
    const stateDir = tempDir();
    const first = await batchRun(s, stateDir, {}, 50_000, (p) => p.batch?.state === 'in_progress');
    assert.equal(first.summary.outcome, 'cancelled');
    assert.equal(first.summary.batch?.open.length, 1);
    const [opened] = first.summary.batch.open;
    const session = new EvaluationSession({ origin: s.baseUrl, kind: 'benchmark', evaluationId: 1 }, stateDir);
    const batch = createBatchTarget({ type: 'openai', baseUrl: `${s.baseUrl}/v1`, model: 'gpt-4o-mini', batch: true }, {}, { connections: 1 })!;
    try {
      assert.deepEqual(await session.abandonBatches(batch, new AbortController().signal), [opened]);
      assert.equal(((await (await fetch(`${s.baseUrl}/v1/batches/${opened}`)).json()) as { status: string }).status, 'cancelling');
    } finally {
      await batch.close();
    }
    // The sandbox's batches now take 300 ms: the next run leaves the abandoned batch alone and sends its traces again.
    options.batchDelayMs = 300;
    const second = await batchRun(s, stateDir);
    assert.equal(second.summary.outcome, 'completed', second.summary.message);
    assert.equal(batchesCreated(s), 2);
    assertAllAnswered(s);
    assert.deepEqual([...second.store.batches.values()].map((b) => b.end), ['abandoned', 'completed']);
  });
});

describe('the Batch API through the CLI: a run that stops', function () {
  this.timeout(90_000);

  async function cliSetup(batchDelayMs: number) {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: TRACES, evaluationSeconds: 0, batchDelayMs });
    const stateDir = tempDir();
    const path = journalPath(stateDir, { origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1 });
    const args = ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--target', 'openai',
      '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'gpt-4o-mini', '--batch', '--api-key-env', 'BATCH_KEY', '--state-dir', stateDir];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token, BATCH_KEY: 'sk-never-logged' };
    /** Stops the child with `signal` once the journal holds a batch id. */
    const stopOnceJournaled = (signal: NodeJS.Signals) => (child: import('node:child_process').ChildProcess) => {
      const poll = setInterval(() => {
        if (existsSync(path) && /"t":"batch"[^\n]*"batch":"batch_/.test(readFileSync(path, 'utf8'))) {
          clearInterval(poll);
          child.kill(signal);
        }
      }, 5);
      child.on('exit', () => clearInterval(poll));
    };
    return { sandbox, path, args, env, stopOnceJournaled };
  }

  it('a SIGKILL after the batch id is journaled, then a rerun: the batch is taken up, never sent twice', async () => {
    const { sandbox, path, args, env, stopOnceJournaled } = await cliSetup(3000);
    try {
      const killed = await cli(args, env, stopOnceJournaled('SIGKILL'));
      assert.equal(killed.signal, 'SIGKILL', killed.stderr);
      assert.equal(batchesCreated(sandbox), 1);
      assert.equal(sandbox.stats.submissions, 0, 'killed while the batch was still running');
      const rerun = await cli(args, env);
      assert.equal(rerun.code, 0, rerun.stdout + rerun.stderr);
      assert.match(rerun.stderr + rerun.stdout, /Taking up batch batch_/);
      assert.equal(batchesCreated(sandbox), 1, 'no second batch for the same traces');
      assertAllAnswered(sandbox);
      assert.equal(sandbox.stats.submissions, TRACES);
      const text = readFileSync(path, 'utf8');
      assert.ok(!text.includes('sk-never-logged'));
      assert.equal(parseJournal(text).records.filter((r) => r.t === 'batch' && r.end === 'completed').length, 1);
    } finally {
      await sandbox.close();
    }
  });

  it('Ctrl-C stops following, says how to take the batch up, and the rerun does', async () => {
    const { sandbox, args, env, stopOnceJournaled } = await cliSetup(3000);
    try {
      const stopped = await cli(args, env, stopOnceJournaled('SIGINT'));
      assert.equal(stopped.code, 130, stopped.stderr);
      assert.match(stopped.stderr, /Stopped following 1 batch\(es\) \(batch_\w+\).*Run the same command again to take them up/);
      const rerun = await cli(args, env);
      assert.equal(rerun.code, 0, rerun.stdout + rerun.stderr);
      assert.equal(batchesCreated(sandbox), 1);
      assertAllAnswered(sandbox);
      assert.match(rerun.stdout, /Batch API: 1 batch\(es\), \d+ token\(s\) at half price \(saved \$0\.\d{4}\)/);
    } finally {
      await sandbox.close();
    }
  });
});
