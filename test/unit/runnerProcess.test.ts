import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from 'vscode-jsonrpc/node';
import { journalPath } from '../../src/core/journal/journal';
import { journalLockPid, lockPathOf } from '../../src/core/journal/journalLock';
import { RemoteRun } from '../../src/extension/runs/runnerClient';
import { interruptedRun, isAlive, liveRunner, runnerFailurePath, runnerFilePath, writeRunnerFile } from '../../src/protocol/runnerFiles';
import { proofOf } from '../../src/protocol/runnerHandshake';
import { hello, prove, RUNNER_PROTOCOL_VERSION, state } from '../../src/protocol/runnerProtocol';
import type { StartParams } from '../../src/protocol/runnerProtocol';
import { EvaluationSession, preview, PREVIEW_CHARS } from '../../src/core';
import type { TargetSpec } from '../../src/core';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { runnerStartParams, tempDir } from './helpers/runs';

const RUNNER = join(__dirname, '..', '..', '..', 'dist', 'runner.js');

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Goes through the handshake proving this secret; resolves to the runner's answer or rejects. */
async function helloWith(socketPath: string, secret: string): Promise<{ pid: number; closed: Promise<void> }> {
  const socket = connect(socketPath);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  const connection = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  connection.listen();
  try {
    const refused = closed.then(() => Promise.reject(new Error('the runner closed the connection')));
    const nonce = randomBytes(32).toString('hex');
    const answer = await Promise.race([connection.sendRequest(hello, { version: RUNNER_PROTOCOL_VERSION, nonce }), refused]);
    await Promise.race([connection.sendRequest(prove, { proof: proofOf(secret, 'window', nonce, answer.nonce) }), refused]);
    await connection.sendRequest(state);
    return { pid: answer.pid, closed };
  } finally {
    connection.dispose();
    socket.destroy();
  }
}

describe('the runner process: owner-only, a secret handshake, secrets only over the socket', function () {
  this.timeout(30_000);
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, evaluationSeconds: 0 });
  });
  afterEach(() => sandbox.close());

  const startParams = (stateDir: string, key: StartParams['key'], target: StartParams['target']): StartParams => runnerStartParams(sandbox, stateDir, key, target);

  it('listens on an owner-only socket, says so in an owner-only file, and answers only a client with its secret', async function () {
    if (process.platform === 'win32') this.skip();
    const journal = join(tempDir(), 'state', 'benchmark-1.jsonl');
    const child = spawn(process.execPath, [RUNNER, journal], { stdio: 'ignore' });
    try {
      await until('the runner file is written', () => liveRunner(journal)?.pid === child.pid);
      const file = liveRunner(journal)!;
      assert.equal(statSync(runnerFilePath(journal)).mode & 0o777, 0o600);
      assert.equal(statSync(dirname(file.socket)).mode & 0o777, 0o700);
      await assert.rejects(helloWith(file.socket, 'ab'.repeat(32)), 'a wrong secret is refused');
      await assert.rejects(helloWith(file.socket, ''), 'no secret is refused');
      assert.equal((await helloWith(file.socket, file.secret)).pid, child.pid);
      assert.equal(interruptedRun(journal), false, 'a live runner is not an interrupted run');
      // Killed, it leaves its file naming a process that is gone: the next window offers to resume.
      child.kill('SIGKILL');
      await until('the runner is gone', () => !isAlive(child.pid!));
      assert.equal(interruptedRun(journal), true);
    } finally {
      child.kill();
    }
  });

  it('a second runner of a journal whose run goes on refuses to start, and leaves the first one\'s file (windows still find it)', async () => {
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const journal = journalPath(stateDir, key);
    const params = startParams(stateDir, key, { spec: coreSpec({ type: 'command', command: 'sleep 0.2; cat' }), secrets: {} });
    let submitted = 0;
    const run = await RemoteRun.start(RUNNER, journal, { ...params, run: { ...params.run, concurrency: 1 } }, { progress: (p) => (submitted = p.counts.submitted), log: () => undefined, needToken: () => Promise.resolve(undefined) });
    try {
      await until('the run holds the journal', () => journalLockPid(journal) === run.pid);
      const second = spawn(process.execPath, [RUNNER, journal], { stdio: 'ignore' });
      const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
      assert.equal(code, 1);
      assert.match(readFileSync(runnerFailurePath(journal), 'utf8'), new RegExp(`already running \\(runner pid ${run.pid}\\)`));
      assert.equal(liveRunner(journal)?.pid, run.pid, "the first runner's file is still there");
      // Mid-run, Run Details' view of it comes from the runner: its rows and figures as its journal says them.
      await until('a trace is submitted', () => submitted >= 1);
      const read = new EvaluationSession(key, stateDir);
      await read.load();
      const ids = [...read.store.traces.keys()].slice(0, 2);
      const view = await run.view([...ids, 'no-such-trace']);
      assert.deepEqual(view?.traces.map((t) => t.traceId), ids, 'the traces asked for that the run knows, in order');
      assert.equal(view.traces[0]!.state, 'submitted');
      assert.equal(view.traces[0]!.answer, preview(read.store.get(ids[0]!)!.prompt, PREVIEW_CHARS), 'cat answers the prompt, as a preview');
      assert.equal(view.run?.runId, read.store.currentRun?.runId);
      assert.match(view.run?.stats ?? '', /latency p50/);
      // By place, when the window does not know the run's list: the list's traces from there on, and how many it has.
      const placed = await run.view([], { start: 1, end: 3 });
      assert.deepEqual(placed?.traces.map((t) => t.traceId), [...read.store.traces.keys()].slice(1, 3));
      assert.equal(placed?.total, read.store.traces.size);
    } finally {
      run.cancel(true);
      await run.finished;
      run.detach();
    }
  });

  it('a runner of another Eval Runner version holding the journal: a new run is refused, in words, and its file stays', async () => {
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const journal = journalPath(stateDir, key);
    mkdirSync(dirname(journal), { recursive: true, mode: 0o700 });
    // This test's process plays the other version's runner: its file and the journal's lock name it.
    const file = { version: RUNNER_PROTOCOL_VERSION + 1, pid: process.pid, socket: '/nowhere/s', secret: 'ab', startedAt: 0 };
    writeRunnerFile(journal, file);
    writeFileSync(lockPathOf(journal), String(process.pid));
    const params = startParams(stateDir, key, { spec: coreSpec({ type: 'echo' }), secrets: {} });
    const started = RemoteRun.start(RUNNER, journal, params, { progress: () => undefined, log: () => undefined, needToken: () => Promise.resolve(undefined) });
    await assert.rejects(started, (error: Error) => {
      assert.match(error.message, new RegExp(`already running: the runner \\(pid ${process.pid}\\) speaks version ${RUNNER_PROTOCOL_VERSION + 1} of the runner protocol .*another Eval Runner version`));
      return true;
    });
    assert.equal(readFileSync(runnerFilePath(journal), 'utf8'), JSON.stringify(file), "the other version's file is left as it was");
  });

  it('runs the evaluation to the end, leaves, and never had the token in its argv or environment', async () => {
    const stateDir = tempDir();
    const origin = new URL(sandbox.baseUrl).origin;
    const key = { origin, kind: 'benchmark' as const, evaluationId: 1 };
    const journal = journalPath(stateDir, key);
    const params = startParams(stateDir, key, { spec: { type: 'echo' }, secrets: {} });
    const seen: number[] = [];
    const run = await RemoteRun.start(RUNNER, journal, params, { progress: (p) => seen.push(p.counts.submitted), log: () => undefined, needToken: () => Promise.resolve(undefined) });
    if (process.platform === 'linux') {
      for (const part of ['cmdline', 'environ']) assert.ok(!readFileSync(`/proc/${run.pid}/${part}`, 'latin1').includes(sandbox.token), `the token is not in the runner's ${part}`);
    }
    const end = await run.finished;
    run.detach();
    assert.equal(end?.outcome, 'completed', end?.message);
    assert.equal(sandbox.stats.submissions, 25);
    await until('the runner leaves', () => !isAlive(run.pid));
    assert.equal(existsSync(runnerFilePath(journal)), false, 'the runner file is gone');
    assert.equal(interruptedRun(journal), false, 'a run that ended is not an interrupted one');
    assert.ok(!readFileSync(journal, 'utf8').includes(sandbox.token), 'the token is not in the journal');
  });

  it('runs an http target whose answer path is JSONPath: the runner requires the library from beside its bundle', async () => {
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const spec = { type: 'http' as const, url: `${sandbox.baseUrl}/v1/chat/completions`, bodyTemplate: '{"messages": [{"role": "user", "content": "{{prompt}}"}]}', answerPath: "$.choices[?@.index==0].message.content" };
    const run = await RemoteRun.start(RUNNER, journalPath(stateDir, key), startParams(stateDir, key, { spec, secrets: {} }), { progress: () => undefined, log: () => undefined, needToken: () => Promise.resolve(undefined) });
    const end = await run.finished;
    run.detach();
    assert.equal(end?.outcome, 'completed', end?.message);
    assert.equal(sandbox.stats.modelCalls, 25);
    assert.equal(sandbox.answerOf(1, 'bench-0003'), 'Render this as text, not HTML: <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">');
  });

  it("a run refused because the journal's answers came from another target crosses as its outcome and words only", async () => {
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const journal = journalPath(stateDir, key);
    const events = { progress: () => undefined, log: () => undefined, needToken: () => Promise.resolve(undefined) };
    const first = await RemoteRun.start(RUNNER, journal, startParams(stateDir, key, { spec: { type: 'echo' }, secrets: {} }), events);
    assert.equal((await first.finished)?.outcome, 'completed');
    first.detach();
    await until('the first runner leaves', () => !isAlive(first.pid));
    const other = { ...startParams(stateDir, key, { spec: { type: 'echo' }, secrets: {} }), identity: { description: 'another echo', fingerprint: 'test:other', facts: {} } };
    const second = await RemoteRun.start(RUNNER, journal, other, events);
    const end = await second.finished;
    second.detach();
    assert.equal(end?.outcome, 'targetChanged');
    // The earlier runs' records (latencies and all) stay in the runner: the window says the words and asks.
    assert.deepEqual(Object.keys(end ?? {}).sort(), ['message', 'outcome']);
    assert.match(end?.message ?? '', /another echo|test:echo|echo/);
  });

  it('runs an openai target with batch: true through the Batch API, and a Cancel that abandons its batch cancels it at the provider', async () => {
    const slow = await startSandbox({ port: 0, evaluationSeconds: 0, batchDelayMs: 30_000 });
    try {
      const stateDir = tempDir();
      const key = { origin: new URL(slow.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
      const journal = journalPath(stateDir, key);
      const params: StartParams = {
        key,
        baseUrl: slow.baseUrl,
        stateDir,
        label: 'test',
        token: slow.token,
        encoding: 'urlencoded',
        proxy: null,
        userAgent: 'eval-runner-test',
        target: { spec: coreSpec({ type: 'openai', baseUrl: `${slow.baseUrl}/v1`, model: 'gpt-4o-mini', batch: true }), secrets: {} },
        identity: { description: 'openai batch', fingerprint: 'test:batch', facts: {} },
        run: { mode: 'continue', holdAnswers: false, concurrency: 4, onTargetError: 'fail', waitForGenerationMs: 0, servicePatienceMs: 5_000, targetTimeoutMs: 10_000, tool: 'test' },
      };
      let following = false;
      const logs: string[] = [];
      const run = await RemoteRun.start(RUNNER, journal, params, {
        progress: (p) => (following ||= p.batch?.state === 'validating' || p.batch?.state === 'in_progress'),
        log: (_level, message) => logs.push(message),
        needToken: () => Promise.resolve(undefined),
      });
      await until('the run follows its batch', () => following);
      run.cancel(false, true);
      const end = await run.finished;
      run.detach();
      assert.equal(end?.outcome, 'cancelled', end?.message);
      const batches = (await (await fetch(`${slow.baseUrl}/v1/batches`)).json()) as { data: Array<{ id: string; status: string }> };
      assert.deepEqual(batches.data.map((b) => b.status), ['cancelling']);
      assert.match(readFileSync(journal, 'utf8'), /"t":"batch"[^\n]*"end":"abandoned"/);
      await until('the runner says so', () => logs.some((l) => l.includes(`Abandoned 1 batch(es) at the provider (${batches.data[0]!.id})`)));
      assert.equal(slow.stats.modelCalls, 0);
    } finally {
      await slow.close();
    }
  });
});

/** A spec as the core declares it (the protocol carries it as a kind and the rest). */
function coreSpec(spec: TargetSpec): TargetSpec {
  return spec;
}
