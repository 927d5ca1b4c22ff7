import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EvaluationSession, journalPath, RunSteering } from '../../src/core';
import { listenForRun } from '../../src/protocol/runListener';
import { reachRun } from '../../src/protocol/runnerConnection';
import { liveRunner, runnerFilePath } from '../../src/protocol/runnerFiles';
import { view } from '../../src/protocol/runnerProtocol';
import type { ViewParams } from '../../src/protocol/runnerTypes';
import { cancelRun } from '../../src/protocol/runnerStart';
import { steerRun } from '../../src/protocol/steerClient';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

// The CLI's run listens on the runner protocol as the editor's runner does (runnerAuth.test.ts plays the attacker
// against that one): the same walk against a run started by `eval-runner run`.

const NOBODY = 65534;

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A model on loopback that answers nothing until released: the run stays in flight while the test walks around it. */
async function heldModel() {
  let calls = 0;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = createHttpServer((req, res) => {
    calls++;
    req.resume();
    void released.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"answer":"ok"}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gen`,
    calls: () => calls,
    release,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Runs `code` in a Node process as nobody; its stdout. */
function asNobody(code: string, arg: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code, arg], { stdio: ['ignore', 'pipe', 'inherit'], cwd: '/', uid: NOBODY, gid: NOBODY });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject).on('close', () => resolve(out));
  });
}

describe("a CLI run's listener: only its owner steers or reads it, and it leaves nothing behind", function () {
  this.timeout(90_000);
  let sandbox: Sandbox;
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 4, evaluationSeconds: 0 });
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const s of servers.splice(0)) s.close();
    await sandbox.close();
  });

  it('another user cannot reach it, a replayed handshake is closed, and a connection left open does not keep the run from ending', async function () {
    if (process.platform === 'win32') return this.skip();
    const model = await heldModel();
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const journal = journalPath(stateDir, key);
    const which = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
    try {
      const run = cli(['run', ...which, '--concurrency', '2', '--target', 'http', '--http-url', model.url, '--answer-path', 'answer'], { EVAL_RUNNER_TOKEN: sandbox.token });
      await until('the run listens and calls its target', () => liveRunner(journal) !== undefined && model.calls() > 0);
      const file = liveRunner(journal)!;
      const folder = dirname(file.socket);
      // Its files are the user's alone, and name no token.
      assert.equal(statSync(runnerFilePath(journal)).mode & 0o777, 0o600);
      assert.equal(statSync(dirname(journal)).mode & 0o777, 0o700);
      assert.equal(statSync(folder).mode & 0o777, 0o700);
      assert.ok(!readFileSync(runnerFilePath(journal), 'utf8').includes(sandbox.token), 'the runner file names the token');

      // Another local user can neither read the runner file nor connect to the socket.
      if (process.getuid?.() === 0) {
        const read = await asNobody("try { require('fs').readFileSync(process.argv[1]); console.log('read'); } catch (e) { console.log(e.code); }", runnerFilePath(journal));
        assert.equal(read.trim(), 'EACCES');
        const reached = await asNobody("const s = require('net').connect(process.argv[1]); s.on('connect', () => (console.log('connected'), s.destroy())); s.on('error', (e) => console.log(e.code));", file.socket);
        assert.equal(reached.trim(), 'EACCES');
      }

      // A steer through a relay of ours, which records the owner's handshake; replayed on a connection of its own,
      // the run closes it and serves nothing.
      const relayPath = join(mkdtempSync(join(tmpdir(), 'evr-')), 's');
      const sent: Buffer[] = [];
      const relay = createServer((window: Socket) => {
        const runner = connect(file.socket);
        window.on('data', (d: Buffer) => (sent.push(d), runner.write(d)));
        runner.pipe(window);
        for (const s of [window, runner]) s.on('error', () => undefined).on('close', () => (window.destroy(), runner.destroy()));
      });
      servers.push(relay);
      await new Promise<void>((resolve) => relay.listen(relayPath, resolve));
      writeFileSync(runnerFilePath(journal), JSON.stringify({ ...file, socket: relayPath }), { mode: 0o600 });
      assert.equal((await steerRun(journal, { action: 'setConcurrency', concurrency: 3 })).concurrency, 3, 'the owner steers');
      // A window's Run Details asks the run what it shows, as it asks a runner: the rows as its journal says them.
      const read = new EvaluationSession(key, stateDir);
      await read.load();
      const ids = [...read.store.traces.keys()];
      const told = await reachRun(journal, (c) => c.sendRequest(view, { ids: [...ids, 'no-such-trace'] }));
      assert.deepEqual(told.traces.map((t) => t.traceId), ids, 'the traces asked for that the run knows, in order');
      // Calls in flight are running in the run's store; its journal says them pending until they answer.
      assert.ok(told.traces.every((t) => t.state === 'running' || t.state === read.store.get(t.traceId)!.state), JSON.stringify(told.traces));
      assert.equal(told.run?.runId, read.store.currentRun?.runId);
      // Rows by place: what a window asks is checked, and a place past the list or out of bounds tells nothing.
      const byPlace = await reachRun(journal, (c) => c.sendRequest(view, { ids: [], rows: { start: 1, end: 3 } }));
      assert.deepEqual([byPlace.traces.map((t) => t.traceId), byPlace.total], [ids.slice(1, 3), ids.length]);
      for (const rows of [{ start: -1, end: 3 }, { start: 0, end: 'all' }, 'rows', { start: 1e300, end: 1e300 }]) {
        const odd = await reachRun(journal, (c) => c.sendRequest(view, { ids: [], rows } as unknown as ViewParams));
        assert.deepEqual(odd.traces, [], JSON.stringify(rows));
      }
      writeFileSync(runnerFilePath(journal), JSON.stringify(file), { mode: 0o600 });
      const handshake = Buffer.concat(sent);
      assert.ok(!handshake.toString('latin1').includes(file.secret), 'the handshake does not carry the secret');
      const rogue = connect(file.socket);
      sockets.push(rogue);
      let got = '';
      let closed = false;
      rogue.on('data', (d: Buffer) => (got += d.toString('latin1'))).on('error', () => undefined).on('close', () => (closed = true));
      rogue.write(handshake);
      await until('the run closes the replayed connection, or serves it', () => closed || got.includes('"concurrency"'));
      assert.ok(closed, `the run served a replayed handshake: ${got}`);
      assert.doesNotMatch(got, /"concurrency"|"paused"/, 'nothing was served to the replay');

      // A connection that never proves itself (a window half-way through attaching), still open when the run ends.
      const idle = connect(file.socket);
      sockets.push(idle);
      idle.on('error', () => undefined);
      await new Promise<void>((resolve) => idle.once('connect', () => resolve()));
      model.release();
      let ended = false;
      const result = run.finally(() => (ended = true));
      await until('the CLI exits with a connection still open to its listener', () => ended, 30_000).catch((error: unknown) => {
        sockets.forEach((s) => s.destroy());
        throw error;
      });
      const r = await result;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(sandbox.stats.submissions, 4);
      assert.ok(!existsSync(runnerFilePath(journal)), 'the runner file is left behind');
      assert.ok(!existsSync(folder), 'the socket folder is left behind');
    } finally {
      await model.close();
    }
  });

  it("a runner file linked from a folder another user controls is not followed: the user's other run is not steered", async function () {
    if (process.platform === 'win32' || process.getuid?.() !== 0) return this.skip(); // another user's folder needs root
    const stateDir = tempDir();
    const mine = join(stateDir, 'mine', 'benchmark-1.jsonl');
    mkdirSync(dirname(mine), { recursive: true, mode: 0o700 });
    const steering = new RunSteering();
    const key = { origin: 'http://127.0.0.1:9', kind: 'benchmark' as const, evaluationId: 1 };
    let cancelled = false;
    const listener = (await listenForRun({ journalFile: mine, steering, label: 'mine', key, cancel: () => (cancelled = true) }))!;
    try {
      // A shared state folder: another user's folder for an evaluation, whose runner file links to this user's run's.
      const theirs = join(stateDir, 'theirs');
      mkdirSync(theirs, { mode: 0o755 });
      chownSync(theirs, NOBODY, NOBODY);
      const journal = join(theirs, 'benchmark-1.jsonl');
      symlinkSync(runnerFilePath(mine), runnerFilePath(journal));
      await assert.rejects(steerRun(journal, { action: 'pause' }), /belongs to uid 65534/);
      // Cancel (an agent's cancel_run) reaches a run through the same checked connection.
      await assert.rejects(cancelRun(journal, true), /belongs to uid 65534/);
      assert.equal(cancelled, false, "the user's other run was cancelled");
      assert.equal(steering.state.paused, false, "the user's other run was paused");
    } finally {
      listener.close();
    }
  });
});
