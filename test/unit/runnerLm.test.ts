import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResponseError } from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { targetIdentity, TargetError } from '../../src/core';
import { journalPath } from '../../src/core/journal/journal';
import { heldBack } from '../../src/core/run/progressText';
import type { RunProgress } from '../../src/core/run/runState';
import { RemoteRun } from '../../src/extension/runs/runnerClient';
import type { RemoteRunEvents } from '../../src/extension/runs/runnerClient';
import { isAlive, liveRunner } from '../../src/protocol/runnerFiles';
import type { LmSendError, LmSendParams, LmSendResult, StartParams } from '../../src/protocol/runnerProtocol';
import { LM_ERROR_CODE } from '../../src/protocol/runnerProtocol';
import { WindowLm } from '../../src/runner/windowLm';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

const RUNNER = join(__dirname, '..', '..', '..', 'dist', 'runner.js');
const MODEL = 'test-chat-model';

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A window's side of the protocol: a fake chat model answering the runner's lmSend requests (capitals, after `ms`). */
function fakeWindow(answer: (p: LmSendParams) => LmSendResult | { error: LmSendError } = (p) => ({ text: p.prompt.toUpperCase(), usage: { promptTokens: 3, completionTokens: 3 } }), ms = 40) {
  const seen = { calls: 0, progress: [] as RunProgress[], logs: [] as string[] };
  const events: RemoteRunEvents = {
    progress: (p) => seen.progress.push(p),
    log: (_level, message) => seen.logs.push(message),
    needToken: () => Promise.resolve(undefined),
    lmSend: async (params, signal) => {
      seen.calls++;
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => (clearTimeout(timer), reject(new DOMException('cancelled', 'AbortError'))), { once: true });
      });
      return answer(params);
    },
  };
  return { seen, events };
}

describe('a vscode-lm run in its runner process: the chat model answers through an attached window', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let stateDir: string;
  let journal: string;
  const spec = { type: 'vscode-lm' as const, model: MODEL };
  const params = (): StartParams => ({
    key: { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 },
    baseUrl: sandbox.baseUrl,
    stateDir,
    label: 'lm',
    token: sandbox.token,
    encoding: 'urlencoded',
    proxy: null,
    userAgent: 'eval-runner-test',
    target: { spec, secrets: {} },
    identity: targetIdentity(spec),
    run: { mode: 'continue', holdAnswers: false, concurrency: 2, onTargetError: 'fail', waitForGenerationMs: 0, servicePatienceMs: 5_000, targetTimeoutMs: 10_000, tool: 'test' },
  });
  const service = () => ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  const journaled = (t: string) =>
    readFileSync(journal, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { t: string; ev?: string; outcome?: string })
      .filter((r) => r.t === t);

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, evaluationSeconds: 0 });
    stateDir = tempDir();
    journal = journalPath(stateDir, params().key);
  });
  afterEach(async () => {
    // A failed test must not leave its runner waiting for a window.
    const left = liveRunner(journal);
    if (left) process.kill(left.pid, 'SIGKILL');
    await sandbox.close();
  });

  it('waits while no window is attached (nothing fails), goes on in the window that attaches, journals the windows, and status shows them', async () => {
    const first = fakeWindow();
    const run = await RemoteRun.start(RUNNER, journal, params(), first.events);
    assert.notEqual(run.pid, process.pid, 'the run is in a process of its own');
    await until('a few prompts are answered by the first window', () => first.seen.calls >= 4);
    // A reload: the window lets go; the run goes on without it, its chat-model calls waiting for the next one.
    run.detach();
    await new Promise((r) => setTimeout(r, 800));
    const submittedWhileAway = sandbox.stats.submissions;
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(sandbox.stats.submissions, submittedWhileAway, 'nothing is answered while no window serves the chat model');
    assert.ok(submittedWhileAway < 25);
    assert.equal(journaled('failed').length, 0, 'no call failed for want of a window');
    assert.ok(liveRunner(journal), 'the runner waits: it is still running');

    const second = fakeWindow();
    const found = await RemoteRun.attach(journal, second.events);
    assert.ok(found && !found.state.finished, 'the reloaded window attaches to the run in progress');
    const end = await found.run.finished;
    found.run.detach();
    assert.equal(end?.outcome, 'completed', end?.message);
    assert.equal(sandbox.stats.submissions, 25);
    assert.ok(second.seen.calls > 0, 'the attached window answered the rest');
    assert.ok(second.seen.logs.some((l) => /^The chat model's calls waited \d+ s for a VS Code window/.test(l)), `the window that came is told how long the calls waited (${JSON.stringify(second.seen.logs)})`);
    // The list is journaled a prompt per line (item records).
    const prompts = (journaled('item') as unknown as Array<{ id: string; p: string }>).map((r) => ({ traceId: r.id, content: r.p }));
    assert.equal(prompts.length, 25);
    for (const { traceId, content } of prompts) {
      assert.equal(sandbox.submissionsOf(1, traceId), 1, `${traceId} submitted once`);
      assert.equal(sandbox.answerOf(1, traceId), content.toUpperCase(), 'the chat model\'s answer');
    }
    await until('the runner leaves', () => !isAlive(run.pid));

    assert.deepEqual(journaled('window').map((r) => r.ev), ['detached', 'attached'], 'the reload is in the run\'s history');
    const status = await cli(['status', ...service()], {});
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /: window reattached 1× \(last \d\d:\d\d:\d\d\) · window closed or reloaded 1× \(last \d\d:\d\d:\d\d\)/);
    const json = JSON.parse((await cli(['status', ...service(), '--json'], {})).stdout) as { runs: Array<{ windows?: { attached: number; detached: number } }> };
    assert.deepEqual(
      json.runs.map((r) => r.windows && { attached: r.windows.attached, detached: r.windows.detached }),
      [{ attached: 1, detached: 1 }],
    );
  });

  it("a refused access in the window stops the run in the runner as in the editor: nothing failed, nothing submitted", async () => {
    const refusal: LmSendError = { kind: 'failed', message: 'Permission to use the test model was not given.', retryable: false, stopsRun: true };
    const window = fakeWindow(() => ({ error: refusal }));
    const run = await RemoteRun.start(RUNNER, journal, params(), window.events);
    const end = await run.finished;
    run.detach();
    assert.equal(end?.outcome, 'error');
    assert.match(end?.message ?? '', /^Permission to use the test model was not given\. The run stopped; answers so far are saved\./);
    assert.equal(sandbox.stats.submissions, 0);
    assert.equal(journaled('failed').length, 0);
    assert.ok(window.seen.calls <= 2, `the run stopped at the first refusals (${window.seen.calls} calls)`);
  });

  it('a cancel while the calls wait for a window stops the run at once (SIGTERM, as the terminal would): its traces stay pending', async () => {
    const first = fakeWindow();
    const run = await RemoteRun.start(RUNNER, journal, params(), first.events);
    await until('a prompt is answered', () => first.seen.calls >= 2);
    run.detach();
    await new Promise((r) => setTimeout(r, 500));
    process.kill(run.pid, 'SIGTERM');
    await until('the runner leaves', () => !isAlive(run.pid), 10_000);
    assert.deepEqual(journaled('end').map((r) => r.outcome), ['cancelled']);
    assert.equal(journaled('failed').length, 0);
  });
});

describe('the runner\'s vscode-lm target (WindowLm)', () => {
  /** A window connection that answers lmSend with `reply`, or fails as a closed connection does. */
  const windowAnswering = (reply: () => Promise<unknown>) => ({ sendRequest: () => reply() }) as unknown as MessageConnection;
  const call = (signal = new AbortController().signal) => ({ signal, timeoutMs: 5_000 });

  it('waits for a window, saying so, and sends the prompt to the first that attaches', async () => {
    const windows = new Set<MessageConnection>();
    const changes: boolean[] = [];
    const lm = new WindowLm(windows, () => changes.push(lm.waitingForWindow));
    const sent = lm.target(MODEL).send('hello', call());
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(lm.waitingForWindow, true);
    assert.equal(heldBack({ waitingFor: 'window' } as RunProgress), 'waiting for a VS Code window to serve the chat model');
    windows.add(windowAnswering(() => Promise.resolve({ text: 'HELLO' })));
    lm.attached();
    assert.equal(await sent, 'HELLO');
    assert.equal(lm.waitingForWindow, false);
    assert.deepEqual(changes, [true, false]);
  });

  it('a window that goes away mid-call hands the call to the next; a cancel ends a wait', async () => {
    const windows = new Set<MessageConnection>();
    const lm = new WindowLm(windows, () => undefined);
    const leaving = windowAnswering(() => {
      windows.delete(leaving);
      return Promise.reject(new ResponseError(-32097, 'Pending response rejected since connection got disposed'));
    });
    windows.add(leaving);
    const sent = lm.target(MODEL).send('hello', call());
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(lm.waitingForWindow, true, 'the call waits for the next window');
    windows.add(windowAnswering(() => Promise.resolve({ text: 'again' })));
    lm.attached();
    assert.equal(await sent, 'again');

    windows.clear();
    const controller = new AbortController();
    const waiting = lm.target(MODEL).send('hello', call(controller.signal));
    controller.abort();
    await assert.rejects(waiting, (e: Error) => e.name === 'AbortError');
    assert.equal(lm.waitingForWindow, false);
  });

  it("maps the window's errors back to the same target errors: Blocked is a quota rate limit; hostile data is bounded", async () => {
    const failing = (data: unknown) => new WindowLm(new Set([windowAnswering(() => Promise.reject(new ResponseError(LM_ERROR_CODE, 'x', data)))]), () => undefined);
    await assert.rejects(failing({ kind: 'rateLimited', message: 'Blocked', quota: true }).target(MODEL).send('p', call()), (e: unknown) => e instanceof TargetError && e.kind === 'rateLimited' && e.details.quota === true);
    await assert.rejects(
      failing({ kind: 'nonsense', message: 'x'.repeat(10_000), stopsRun: 'yes' }).target(MODEL).send('p', call()),
      (e: unknown) => e instanceof TargetError && e.kind === 'failed' && e.message.length <= 2_000 && e.details.stopsRun === undefined,
    );
  });
});
