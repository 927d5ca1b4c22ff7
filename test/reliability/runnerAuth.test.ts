import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { journalPath } from '../../src/core/journal/journal';
import { isOwnProcess } from '../../src/core/journal/journalLock';
import { RemoteRun } from '../../src/extension/runs/runnerClient';
import type { RemoteRunEvents } from '../../src/extension/runs/runnerClient';
import { findRunner, interruptedRun, isAlive, liveRunner, newSocketPath, runnerFilePath, socketProblem, writeRunnerFile } from '../../src/protocol/runnerFiles';
import type { RunnerFile } from '../../src/protocol/runnerFiles';
import { RunnerVersionError } from '../../src/protocol/runnerHandshake';
import { RUNNER_PROTOCOL_VERSION } from '../../src/protocol/runnerProtocol';
import type { StartParams } from '../../src/protocol/runnerProtocol';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { tempDir } from '../unit/helpers/runs';

const ROOT = join(__dirname, '..', '..', '..');
const RUNNER = join(ROOT, 'dist', 'runner.js');
const TOKEN = 'tok-of-the-user-0123456789';
const MODEL_KEY = 'sk-model-key-of-the-user-0123456789';
const NOBODY = 65534;

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A plain listener playing a runner (a process of its own, so that it can run as another user): on each
 * connection it asks at once for the token and a chat model's call, answers a hello with a made-up proof and any
 * other request with an empty state, and reports on stdout every connection, every byte it receives, every close.
 * argv: the socket path, or a folder to make (mkdtemp) and listen in; then the protocol version it answers a hello
 * with (by default the window's own).
 */
const IMPOSTOR = String.raw`
const net = require('node:net'), fs = require('node:fs'), path = require('node:path'), crypto = require('node:crypto');
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const frame = (o) => { const b = Buffer.from(JSON.stringify(o)); return Buffer.concat([Buffer.from('Content-Length: ' + b.length + '\r\n\r\n'), b]); };
const arg = process.argv[1];
const speaks = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
const socket = arg.endsWith('/s') ? arg : path.join(fs.mkdtempSync(path.join(arg, 'evr-')), 's');
let n = 0;
net.createServer((s) => {
  say({ connection: ++n });
  s.write(frame({ jsonrpc: '2.0', id: 'ask-token', method: 'evalRunner/needToken' }));
  s.write(frame({ jsonrpc: '2.0', id: 'ask-model', method: 'evalRunner/lmSend', params: { prompt: 'hi', timeoutMs: 5000 } }));
  let buf = Buffer.alloc(0);
  s.on('data', (d) => {
    say({ got: d.toString('base64') });
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/Content-Length: (\d+)/.exec(buf.subarray(0, end).toString())[1]);
      if (buf.length < end + 4 + len) return;
      const msg = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString());
      buf = buf.subarray(end + 4 + len);
      if (msg.id === undefined || !msg.method) continue;
      const hex = () => crypto.randomBytes(32).toString('hex');
      const result = msg.method === 'evalRunner/hello' ? { version: speaks === undefined ? msg.params && msg.params.version : speaks, pid: process.pid, nonce: hex(), proof: hex() } : { label: '', key: null, progress: null, finished: null };
      s.write(frame({ jsonrpc: '2.0', id: msg.id, result }));
    }
  });
  s.on('error', () => undefined);
  s.on('close', () => say({ closed: n }));
}).listen(socket, () => say({ socket }));
`;

interface Impostor {
  child: ChildProcess;
  socket: string;
  /** Connections it had, and everything it received (as text). */
  connections(): number;
  received(): string;
  closes(): number;
}

async function startImpostor(where: string, as?: { uid: number; gid: number }, speaks?: number): Promise<Impostor> {
  const child = spawn(process.execPath, ['-e', IMPOSTOR, where, ...(speaks === undefined ? [] : [String(speaks)])], { stdio: ['ignore', 'pipe', 'inherit'], cwd: '/', ...(as ?? {}) });
  let connections = 0;
  let closes = 0;
  let received = '';
  let socket: string | undefined;
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      const o = JSON.parse(line) as { socket?: string; connection?: number; got?: string; closed?: number };
      if (o.socket) socket = o.socket;
      if (o.connection) connections = o.connection;
      if (o.got) received += Buffer.from(o.got, 'base64').toString('latin1');
      if (o.closed) closes++;
    }
  });
  await until('the impostor listens', () => socket !== undefined);
  return { child, socket: socket!, connections: () => connections, received: () => received, closes: () => closes };
}

/** A window's events that would hand over the token and a model's answer (with its key) if ever asked. */
function windowEvents() {
  const seen = { tokenAsked: 0, modelCalls: 0, logs: [] as string[] };
  const events: RemoteRunEvents = {
    progress: () => undefined,
    log: (_level, message) => seen.logs.push(message),
    needToken: () => (seen.tokenAsked++, Promise.resolve(TOKEN)),
    lmSend: () => (seen.modelCalls++, Promise.resolve({ text: `answer made with ${MODEL_KEY}` })),
  };
  return { seen, events };
}

/** A runner file naming this listener, as a runner killed hard leaves it (its pid: a live process). */
function staleRunnerFile(journal: string, socket: string, pid: number): RunnerFile {
  const file = { version: RUNNER_PROTOCOL_VERSION, pid, socket, secret: randomBytes(32).toString('hex'), startedAt: Date.now() };
  mkdirSync(dirname(journal), { recursive: true, mode: 0o700 });
  writeRunnerFile(journal, file);
  return file;
}

/** Connects to the impostor itself, so that every connection before it has been reported. */
async function probe(impostor: Impostor): Promise<number> {
  const before = impostor.connections();
  const s = connect(impostor.socket);
  await until('the probe is seen', () => impostor.connections() > before);
  s.destroy();
  return impostor.connections() - 1;
}

function assertNothingGiven(impostor: Impostor, file: RunnerFile): void {
  const got = impostor.received();
  for (const [what, value] of [['the secret', file.secret], ['the token', TOKEN], ['the model key', MODEL_KEY]] as const) {
    assert.ok(!got.includes(value), `the listener received ${what}`);
  }
  assert.doesNotMatch(got, /evalRunner\/(state|start|prove|cancel)/, 'nothing but the hello was sent');
}

describe('the window and the runner prove themselves to each other: a listener at a runner\'s socket gets nothing', function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
  });
  const posixOnly = function (this: Mocha.Context) {
    if (process.platform === 'win32') this.skip();
  };

  it('an impostor at the socket a stale runner file names (in a folder of ours) cannot prove itself: no secret, token or model key reaches it, nothing it asks is answered', async function () {
    posixOnly.call(this);
    const folder = mkdtempSync(join(tmpdir(), 'evr-'));
    const impostor = await startImpostor(join(folder, 's'));
    children.push(impostor.child);
    const journal = join(tempDir(), 'origin', 'benchmark-1.jsonl');
    const file = staleRunnerFile(journal, impostor.socket, impostor.child.pid!);
    const { seen, events } = windowEvents();
    assert.equal(await RemoteRun.attach(journal, events), undefined, 'the window does not attach');
    await until('the impostor sees the window go', () => impostor.closes() >= 1);
    assert.match(impostor.received(), /evalRunner\/hello/, 'the window did connect (the handshake refused it)');
    assertNothingGiven(impostor, file);
    assert.deepEqual([seen.tokenAsked, seen.modelCalls], [0, 0], 'the user was not asked for a token, no model was called');
    assert.ok(seen.logs.some((l) => l.includes('did not prove it is the runner')), seen.logs.join('\n'));
    assert.ok(existsSync(runnerFilePath(journal)), 'the runner file is left alone');
  });

  it("a runner whose hello speaks another protocol version is named to the user as another Eval Runner version, not taken for no runner", async function () {
    posixOnly.call(this);
    const folder = mkdtempSync(join(tmpdir(), 'evr-'));
    const impostor = await startImpostor(join(folder, 's'), undefined, RUNNER_PROTOCOL_VERSION + 1);
    children.push(impostor.child);
    const journal = join(tempDir(), 'origin', 'benchmark-1.jsonl');
    const file = staleRunnerFile(journal, impostor.socket, impostor.child.pid!);
    const { seen, events } = windowEvents();
    await assert.rejects(RemoteRun.attach(journal, events), (error: Error) => {
      assert.ok(error instanceof RunnerVersionError, String(error));
      assert.equal(error.message, `the runner (pid ${file.pid}) speaks version ${RUNNER_PROTOCOL_VERSION + 1} of the runner protocol and this Eval Runner version ${RUNNER_PROTOCOL_VERSION}: it is a run of another Eval Runner version (as after an update); wait for it to end, or stop it`);
      return true;
    });
    await until('the impostor sees the window go', () => impostor.closes() >= 1);
    assertNothingGiven(impostor, file);
    assert.deepEqual([seen.tokenAsked, seen.modelCalls], [0, 0], 'the user was not asked for a token, no model was called');
    assert.ok(existsSync(runnerFilePath(journal)), 'the runner file is left alone');
  });

  it('an impostor of another user (nobody) owning the socket folder: the window does not even connect', async function () {
    if (process.platform === 'win32') return this.skip();
    if (process.getuid?.() !== 0) return this.skip(); // running as another user needs root: see the README
    const impostor = await startImpostor(tmpdir(), { uid: NOBODY, gid: NOBODY });
    children.push(impostor.child);
    assert.equal(statSync(dirname(impostor.socket)).uid, NOBODY);
    const journal = join(tempDir(), 'origin', 'benchmark-1.jsonl');
    const file = staleRunnerFile(journal, impostor.socket, impostor.child.pid!);
    const { seen, events } = windowEvents();
    assert.equal(await RemoteRun.attach(journal, events), undefined);
    assert.equal(await probe(impostor), 0, 'no connection before the probe');
    assertNothingGiven(impostor, file);
    assert.equal(impostor.received(), '');
    assert.deepEqual([seen.tokenAsked, seen.modelCalls], [0, 0]);
    assert.ok(seen.logs.some((l) => l.includes(`belongs to uid ${NOBODY}`)), seen.logs.join('\n'));
  });

  for (const [what, place] of [
    ['a symbolic link', (real: string) => (symlinkSync(real, `${real}-link`), `${real}-link`)],
    ['open to other users (0755)', (real: string) => (chmodSync(real, 0o755), real)],
  ] as const) {
    it(`a socket folder that is ${what} is refused before connecting`, async function () {
      posixOnly.call(this);
      const real = mkdtempSync(join(tmpdir(), 'evr-'));
      const impostor = await startImpostor(join(real, 's'));
      children.push(impostor.child);
      const journal = join(tempDir(), 'origin', 'benchmark-1.jsonl');
      const file = staleRunnerFile(journal, join(place(real), 's'), impostor.child.pid!);
      const { seen, events } = windowEvents();
      assert.equal(await RemoteRun.attach(journal, events), undefined);
      assert.equal(await probe(impostor), 0, 'no connection before the probe');
      assertNothingGiven(impostor, file);
      assert.ok(seen.logs.some((l) => l.includes(what.startsWith('a symbolic') ? 'is a symbolic link' : 'is open to other users (mode 755')), seen.logs.join('\n'));
    });
  }
});

describe('a runner file: whose process it names, which version it speaks', () => {
  it('a runner of another protocol version is found and named (its pid), not skipped without a word', () => {
    const journal = join(tempDir(), 'origin', 'benchmark-1.jsonl');
    mkdirSync(dirname(journal), { recursive: true });
    writeFileSync(runnerFilePath(journal), JSON.stringify({ version: RUNNER_PROTOCOL_VERSION - 1, pid: process.pid, socket: '/nowhere/s', secret: 'ab', startedAt: 0 }), { mode: 0o600 });
    assert.deepEqual(findRunner(journal), { other: { pid: process.pid, version: RUNNER_PROTOCOL_VERSION - 1 } });
    assert.equal(liveRunner(journal), undefined, 'not one to attach to');
    assert.equal(interruptedRun(journal), false, 'its run goes on');
  });

  it("a runner file naming another user's process (EPERM) is not our runner: the run was cut short; a journal lock held by one is still held", async function () {
    if (process.platform === 'win32' || process.getuid?.() !== 0) return this.skip(); // needs a process of another user: see the README
    const dir = mkdtempSync(join(tmpdir(), 'evr-eperm-'));
    chmodSync(dir, 0o755);
    const journal = join(dir, 'benchmark-1.jsonl');
    // pid 1 is root's: signalling it is EPERM for nobody.
    writeFileSync(runnerFilePath(journal), JSON.stringify({ version: RUNNER_PROTOCOL_VERSION, pid: 1, socket: '/nowhere/s', secret: 'ab', startedAt: 0 }), { mode: 0o644 });
    writeFileSync(`${journal}.lock`, '1', { mode: 0o644 });
    const script = `const f = require(${JSON.stringify(join(ROOT, 'out', 'src', 'protocol', 'runnerFiles.js'))}); const j = ${JSON.stringify(journal)};
      process.stdout.write(JSON.stringify({ live: f.liveRunner(j) !== undefined, interrupted: f.interruptedRun(j), held: f.journalHeld(j), alive: f.isAlive(1) }));`;
    const child = spawn(process.execPath, ['-e', script], { uid: NOBODY, gid: NOBODY, cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 0);
    assert.deepEqual(JSON.parse(out), { live: false, interrupted: true, held: true, alive: true });
  });
});

describe('on Windows, a window connects only to a pipe of this machine named as a runner names it', () => {
  it('refuses another host\'s pipe (its credentials would go there), a path, and any other name', () => {
    const ours = newSocketPath('win32').path;
    assert.equal(socketProblem(ours, 'win32'), undefined);
    for (const other of ['\\\\evil.example\\pipe\\eval-runner-0123456789abcdef01234567', '\\\\.\\pipe\\other', 'C:\\Users\\me\\s', `${ours}\\..\\x`]) {
      assert.match(socketProblem(other, 'win32') ?? '', /not a named pipe of this machine named by Eval Runner/, other);
    }
  });
});

describe('a process that ended and was not reaped yet (a zombie) is gone', () => {
  it('for a runner file and for the journal lock alike: a window reloading just after a runner was killed offers to resume', async function () {
    if (process.platform !== 'linux') return this.skip(); // read from /proc
    // Python reaps no child by itself: the forked one stays a zombie while its parent sleeps.
    const parent = spawn('python3', ['-c', 'import os, sys, time\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(30)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      let out = '';
      parent.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await until('the child is a zombie', () => out.endsWith('\n') && /\) Z /.test(readProc(Number(out))));
      const zombie = Number(out);
      assert.deepEqual([isAlive(zombie), isOwnProcess(zombie)], [false, false]);
      assert.equal(isAlive(parent.pid!), true, 'its parent lives');
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

function readProc(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return '';
  }
}

describe("the runner's files: exclusive create, no link followed, an owner-only folder", function () {
  this.timeout(30_000);

  it('writing the runner file follows no link planted at its temporary name', function () {
    if (process.platform === 'win32') return this.skip();
    const dir = tempDir();
    const journal = join(dir, 'benchmark-1.jsonl');
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'untouched');
    // The name the temporary file had: predictable, in a folder another user may share.
    symlinkSync(victim, `${runnerFilePath(journal)}.${process.pid}.tmp`);
    writeRunnerFile(journal, { version: RUNNER_PROTOCOL_VERSION, pid: process.pid, socket: '/nowhere/s', secret: 'ab', startedAt: 0 });
    assert.equal(readFileSync(victim, 'utf8'), 'untouched');
    assert.equal(statSync(runnerFilePath(journal)).mode & 0o777, 0o600);
  });

  it("the runner tightens its journal's folder (0755) to 0700 before it writes its file there", async function () {
    if (process.platform === 'win32') return this.skip();
    const folder = join(tempDir(), 'origin');
    mkdirSync(folder, { mode: 0o755 });
    chmodSync(folder, 0o755);
    const journal = join(folder, 'benchmark-1.jsonl');
    const child = spawn(process.execPath, [RUNNER, journal], { stdio: 'ignore' });
    try {
      await until('the runner file is written', () => liveRunner(journal)?.pid === child.pid);
      assert.equal(statSync(folder).mode & 0o777, 0o700);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('a real runner serves only a window that proved itself: a replayed handshake gets nothing', function () {
  this.timeout(90_000);
  let sandbox: Sandbox;
  const servers: Server[] = [];
  beforeEach(async () => {
    // The run's first token lists the prompts, and is refused when it submits: the runner asks a window for another.
    sandbox = await startSandbox({
      port: 0,
      evaluationSeconds: 0,
      intercept: (req, res) => {
        const given = req.headers.authorization;
        if (given === 'Bearer the-new-token' || (given === 'Bearer the-first-token' && req.method === 'GET')) req.headers.authorization = `Bearer ${sandbox.token}`;
        if (req.headers.authorization !== 'Bearer the-first-token') return false;
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":"req_1","message":"Token revoked","data":null,"success":false}');
        return true;
      },
    });
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) s.close();
    await sandbox.close();
  });

  /** A relay of ours between a window and the runner, recording what the window sends. */
  async function relay(to: string): Promise<{ path: string; sent: Buffer[] }> {
    const path = join(mkdtempSync(join(tmpdir(), 'evr-')), 's');
    const sent: Buffer[] = [];
    const server = createServer((window: Socket) => {
      const runner = connect(to);
      window.on('data', (d: Buffer) => (sent.push(d), runner.write(d)));
      runner.pipe(window);
      for (const s of [window, runner]) s.on('error', () => undefined).on('close', () => (window.destroy(), runner.destroy()));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return { path, sent };
  }

  it('a client replaying a window\'s handshake to the runner is closed: no token question, no chat model call, no state', async function () {
    if (process.platform === 'win32') return this.skip();
    const stateDir = tempDir();
    const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
    const journal = journalPath(stateDir, key);
    const spec = { type: 'vscode-lm' as const, model: 'm' };
    const params: StartParams = {
      key, baseUrl: sandbox.baseUrl, stateDir, label: 'auth', token: 'the-first-token', encoding: 'urlencoded', proxy: null, userAgent: 'eval-runner-test',
      target: { spec, secrets: {} }, identity: { description: 'vscode-lm', fingerprint: 'test:lm', facts: {} },
      run: { mode: 'continue', holdAnswers: false, concurrency: 2, onTargetError: 'fail', waitForGenerationMs: 0, servicePatienceMs: 60_000, targetTimeoutMs: 10_000, tool: 'test' },
    };
    // The first window starts the run and goes (a reload) while the run waits for a new token.
    let firstAsked = false;
    const first = await RemoteRun.start(RUNNER, journal, params, {
      progress: () => undefined,
      log: () => undefined,
      needToken: () => ((firstAsked = true), new Promise(() => undefined)),
      lmSend: (p) => Promise.resolve({ text: p.prompt.toUpperCase() }),
    });
    await until('the run asks for a token', () => firstAsked);
    first.detach();
    const file = liveRunner(journal)!;
    // The next window attaches through a relay that records what it sends.
    const tap = await relay(file.socket);
    writeFileSync(runnerFilePath(journal), JSON.stringify({ ...file, socket: tap.path }), { mode: 0o600 });
    let giveToken: (token: string) => void = () => undefined;
    const second = { tokenAsked: 0, modelCalls: 0 };
    const attached = await RemoteRun.attach(journal, {
      progress: () => undefined,
      log: () => undefined,
      needToken: () => (second.tokenAsked++, new Promise<string>((resolve) => (giveToken = resolve))),
      lmSend: (p) => (second.modelCalls++, Promise.resolve({ text: p.prompt.toUpperCase() })),
    });
    assert.ok(attached, 'the window attaches through the relay');
    await until('the run asks the window for a token', () => second.tokenAsked === 1);
    const handshake = Buffer.concat(tap.sent);
    assert.ok(!handshake.toString('latin1').includes(file.secret), "the window's handshake does not carry the secret");
    // A client that saw it all replays it on a connection of its own, straight to the runner.
    const rogue = connect(file.socket);
    let got = '';
    let closed = false;
    rogue.on('data', (d: Buffer) => (got += d.toString('latin1'))).on('error', () => undefined).on('close', () => (closed = true));
    rogue.write(handshake);
    await until('the runner closes the replayed connection, or serves it', () => closed || got.includes('"label"'));
    assert.ok(closed, `the runner served a replayed handshake: ${got}`);
    giveToken('the-new-token');
    const end = await attached.run.finished;
    attached.run.detach();
    assert.equal(end?.outcome, 'completed', end?.message);
    assert.equal(sandbox.stats.submissions, 25, 'every answer submitted with the new token');
    assert.doesNotMatch(got, /evalRunner\/(needToken|lmSend|progress|log)|"label"/, 'the replaying client was asked nothing and told nothing');
    await until('the runner leaves', () => !isAlive(file.pid));
  });
});
