import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createApiClient } from '../../src/api/client';
import { runEvaluation } from '../../src/core/run/engine';
import type { RunSummary } from '../../src/core/run/engine';
import type { RunOutcome } from '../../src/core/run/runState';
import { journalPath, openJournal, parseJournal } from '../../src/core/journal/journal';
import { TraceStore } from '../../src/core/store/traceStore';
import { scriptedTarget, tempDir } from '../unit/helpers/runs';

/** What a raw peer saw of one request. */
interface RawRequest {
  method: string;
  path: string;
  headers: string;
}

type Reply = (socket: Socket, req: RawRequest, ctx: { port: number; otherPort: number }) => void;

const TOKEN = 'malformed-corpus-token-1234';
const PROMPTS = [
  { traceId: 't1', content: 'first prompt' },
  { traceId: 't2', content: 'second prompt' },
  { traceId: 't3', content: 'third prompt' },
];
const envelope = (data: unknown, success = true, message = 'ok') => JSON.stringify({ code: 'req_corpus', message, data, success });

/** A whole HTTP/1.1 response, closing the connection after it. */
function http(status: string, headers: Record<string, string>, body: string | Buffer = ''): Reply {
  return (socket) => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const head = Object.entries({ 'content-length': String(bytes.length), ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${status}\r\nconnection: close\r\n${head}\r\n`), bytes]));
  };
}
const jsonReply = (body: string, status = '200 OK') => http(status, { 'content-type': 'application/json' }, body);
const raw = (text: string): Reply => (socket) => socket.end(text);
const silence: Reply = () => undefined;

const GOOD: Record<'list' | 'submit', Reply> = {
  list: jsonReply(envelope(PROMPTS)),
  submit: jsonReply(envelope('Response submitted successfully')),
};

interface Case {
  name: string;
  /** Which request misbehaves; the other one is answered well. */
  on: 'list' | 'submit';
  reply: Reply;
  outcome: RunOutcome;
  /** The run's message (list) or the traces' failure reason (submit) must say this. */
  says: RegExp;
}

const big = Buffer.alloc(50 * 1024 * 1024, 'x');

const CORPUS: Case[] = [
  // Bodies that are not the envelope.
  { name: 'an HTML login page with 200', on: 'list', reply: http('200 OK', { 'content-type': 'text/html' }, '<!DOCTYPE html><html><body><form>Sign in</form></body></html>'), outcome: 'error', says: /HTML page instead of JSON/ },
  { name: 'truncated JSON', on: 'list', reply: jsonReply('{"code":"req_1","message":"ok","data":[{"traceId":"t1","cont'), outcome: 'error', says: /truncated or invalid JSON/ },
  { name: 'an empty 200 body', on: 'list', reply: jsonReply(''), outcome: 'error', says: /an empty body/ },
  { name: '204 No Content', on: 'list', reply: http('204 No Content', {}), outcome: 'error', says: /an empty body/ },
  { name: 'a bare array, no envelope', on: 'list', reply: jsonReply(JSON.stringify(PROMPTS)), outcome: 'error', says: /not the expected envelope/ },
  { name: 'success as a string', on: 'list', reply: jsonReply('{"code":"req_1","message":"ok","data":[],"success":"true"}'), outcome: 'error', says: /not the expected envelope .*\(success: expected boolean\)/ },
  { name: 'success missing', on: 'list', reply: jsonReply('{"code":"req_1","message":"ok","data":[]}'), outcome: 'error', says: /not the expected envelope .*\(success: expected boolean\)/ },
  { name: 'success:false with 200', on: 'list', reply: jsonReply(envelope(null, false, 'Evaluation is archived')), outcome: 'error', says: /reported a failure.*Evaluation is archived/ },
  { name: 'data null', on: 'list', reply: jsonReply(envelope(null)), outcome: 'error', says: /prompt list is malformed/ },
  { name: 'data an object', on: 'list', reply: jsonReply(envelope({ items: PROMPTS })), outcome: 'error', says: /prompt list is malformed/ },
  { name: 'a traceId of the wrong type', on: 'list', reply: jsonReply(envelope([PROMPTS[0], { traceId: 2, content: 'x' }])), outcome: 'error', says: /item 1: traceId: expected string/ },
  { name: 'an item without content', on: 'list', reply: jsonReply(envelope([{ traceId: 't1' }])), outcome: 'error', says: /item 0: content: expected string/ },
  { name: 'a null item', on: 'list', reply: jsonReply(envelope([null])), outcome: 'error', says: /item 0: expected object/ },
  { name: 'NaN in the JSON', on: 'list', reply: jsonReply('{"code":"req_1","message":"ok","data":NaN,"success":true}'), outcome: 'error', says: /truncated or invalid JSON/ },
  { name: 'JSON nested 100,000 deep', on: 'list', reply: jsonReply(`{"code":"r","message":"ok","success":true,"data":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), outcome: 'error', says: /prompt list is malformed|invalid JSON/ },
  { name: 'a 50 MB body that is not JSON', on: 'list', reply: http('200 OK', { 'content-type': 'application/json' }, big), outcome: 'error', says: /truncated or invalid JSON/ },
  { name: 'a PNG with 200', on: 'list', reply: http('200 OK', { 'content-type': 'image/png' }, Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')), outcome: 'error', says: /image\/png/ },
  { name: 'a gzip body nobody asked for', on: 'list', reply: http('200 OK', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(envelope(PROMPTS))), outcome: 'error', says: /gzip/ },
  // Statuses.
  { name: 'a proxy\'s HTML 500', on: 'list', reply: http('500 Internal Server Error', { 'content-type': 'text/html' }, '<html><body>Internal error</body></html>'), outcome: 'error', says: /HTTP 500/ },
  { name: 'HTTP 418', on: 'list', reply: jsonReply(envelope(null, false, 'I am a teapot'), '418 I\'m a teapot'), outcome: 'error', says: /HTTP 418.*teapot/ },
  { name: 'a 404 with the service\'s words', on: 'list', reply: jsonReply(envelope(null, false, 'No such evaluation'), '404 Not Found'), outcome: 'error', says: /HTTP 404.*No such evaluation/ },
  { name: 'a 401', on: 'list', reply: jsonReply(envelope(null, false, 'Token expired'), '401 Unauthorized'), outcome: 'auth', says: /HTTP 401.*Token expired/ },
  { name: 'a 429 asking for an hour', on: 'list', reply: http('429 Too Many Requests', { 'content-type': 'application/json', 'retry-after': '3600' }, envelope(null, false, 'slow down')), outcome: 'error', says: /HTTP 429/ },
  // Redirects.
  { name: 'a redirect loop', on: 'list', reply: (s, req) => http('302 Found', { location: req.path })(s, req, { port: 0, otherPort: 0 }), outcome: 'error', says: /redirected more than 5 times/ },
  { name: 'a redirect to another origin', on: 'list', reply: (s, req, c) => http('302 Found', { location: `http://127.0.0.1:${c.otherPort}${req.path}` })(s, req, c), outcome: 'error', says: /another origin.*token was not sent/ },
  // Broken HTTP.
  { name: 'a header that never ends', on: 'list', reply: (s) => { s.write('HTTP/1.1 200 OK\r\nx-slow: '); const t = setInterval(() => (s.destroyed ? clearInterval(t) : s.write('a')), 50); s.on('close', () => clearInterval(t)); }, outcome: 'unreachable', says: /did not answer|timed out|within/ },
  { name: 'a 100 KB header', on: 'list', reply: raw(`HTTP/1.1 200 OK\r\nx-big: ${'b'.repeat(100_000)}\r\ncontent-length: 0\r\n\r\n`), outcome: 'error', says: /not valid HTTP/ },
  { name: 'not HTTP at all', on: 'list', reply: raw('SSH-2.0-OpenSSH_9.2p1 Debian\r\n'), outcome: 'error', says: /not valid HTTP/ },
  { name: 'a broken status line', on: 'list', reply: raw('HTTP/1.1 2OO OK\r\ncontent-length: 0\r\n\r\n'), outcome: 'error', says: /not valid HTTP/ },
  { name: 'a malformed chunked body', on: 'list', reply: raw('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n'), outcome: 'error', says: /not valid HTTP/ },
  { name: 'a connection closed without a reply', on: 'list', reply: (s) => s.destroy(), outcome: 'unreachable', says: /closed the connection/ },
  { name: 'a body cut short', on: 'list', reply: raw('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n{"code":"req_1",'), outcome: 'unreachable', says: /closed the connection/ },
  { name: 'a body that stops coming', on: 'list', reply: (s) => s.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n{"code":"req_1",'), outcome: 'unreachable', says: /did not answer|timed out|within/ },
  // Submissions.
  { name: 'a submission answered with HTML', on: 'submit', reply: http('200 OK', { 'content-type': 'text/html' }, '<html>OK</html>'), outcome: 'failedTraces', says: /HTML page instead of JSON/ },
  { name: 'a submission with success:false and 200', on: 'submit', reply: jsonReply(envelope(null, false, 'Trace already closed')), outcome: 'failedTraces', says: /reported a failure.*Trace already closed/ },
  { name: 'a submission without success', on: 'submit', reply: jsonReply('{"code":"req_1","message":"Response submitted successfully","data":"ok"}'), outcome: 'failedTraces', says: /not the expected envelope .*\(success: expected boolean\)/ },
  { name: 'a submission answered with 50 MB', on: 'submit', reply: jsonReply(big.toString('latin1')), outcome: 'failedTraces', says: /larger than 1 MiB/ },
  { name: 'a submission redirected', on: 'submit', reply: (s, req, c) => http('307 Temporary Redirect', { location: '/elsewhere' })(s, req, c), outcome: 'failedTraces', says: /redirected the submission/ },
  { name: 'a submission refused with 413', on: 'submit', reply: jsonReply(envelope(null, false, 'Body too large'), '413 Payload Too Large'), outcome: 'failedTraces', says: /HTTP 413/ },
  { name: 'a submission never answered', on: 'submit', reply: silence, outcome: 'unreachable', says: /did not answer|timed out|within/ },
  { name: 'a submission whose connection drops', on: 'submit', reply: (s) => s.destroy(), outcome: 'unreachable', says: /closed the connection/ },
  { name: 'a submission with a 401', on: 'submit', reply: jsonReply(envelope(null, false, 'Token revoked'), '401 Unauthorized'), outcome: 'auth', says: /HTTP 401.*Token revoked/ },
];

/** A raw TCP peer: every case can send bytes no HTTP library would. */
async function rawService(pick: (req: RawRequest) => Reply): Promise<{ port: number; otherPort: number; tokensSeenElsewhere: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { port: 0, otherPort: 0, tokensSeenElsewhere: 0 };
  const serve = (onRequest: (s: Socket, r: RawRequest) => void): Server =>
    createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      let buffer = Buffer.alloc(0);
      let pending: { req: RawRequest; bodyLeft: number } | undefined;
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        if (!pending) {
          const end = buffer.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = buffer.subarray(0, end).toString('latin1');
          buffer = buffer.subarray(end + 4);
          const [method = '', path = ''] = head.split('\r\n')[0]!.split(' ');
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          pending = { req: { method, path, headers: head }, bodyLeft: length };
        }
        if (buffer.length < pending.bodyLeft) return;
        const { req } = pending;
        pending = undefined;
        buffer = Buffer.alloc(0);
        onRequest(socket, req);
      });
    });
  const main = serve((s, r) => pick(r)(s, r, state));
  const other = serve((s, r) => {
    if (r.headers.toLowerCase().includes('authorization')) state.tokensSeenElsewhere++;
    s.destroy();
  });
  for (const [server, key] of [[main, 'port'], [other, 'otherPort']] as const) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    state[key] = (server.address() as AddressInfo).port;
  }
  return {
    ...state,
    get tokensSeenElsewhere() {
      return state.tokensSeenElsewhere;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([main, other].map((srv) => new Promise<void>((resolve) => srv.close(() => resolve()))));
    },
  };
}

describe('malformed responses: a corpus of 40 misbehaving services', function () {
  this.timeout(30_000);
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  before(() => {
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);
  });
  after(() => {
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
  });

  it('has at least 30 cases', () => assert.ok(CORPUS.length >= 30, `${CORPUS.length} cases`));

  for (const c of CORPUS) {
    it(`${c.name}: ${c.outcome}, saying what happened; journal intact; a rerun against a sound service loses nothing`, async () => {
      let misbehave = true;
      const service = await rawService((req) => {
        const which = req.method === 'GET' ? 'list' : 'submit';
        return misbehave && which === c.on ? c.reply : GOOD[which];
      });
      const baseUrl = `http://127.0.0.1:${service.port}`;
      const stateDir = tempDir();
      const path = journalPath(stateDir, { origin: baseUrl, kind: 'benchmark', evaluationId: 7 });
      // An earlier run left one journaled, unsubmitted answer: it must survive whatever happens next.
      const before = `${JSON.stringify({ t: 'run', at: 1 })}\n${JSON.stringify({ t: 'answer', id: 't1', p: 'first prompt', a: 'kept answer', at: 2 })}\n`;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, before);
      const target = scriptedTarget((p) => `answer to ${p}`);
      const run = async (): Promise<{ summary: RunSummary; logs: string[] }> => {
        const client = createApiClient({ baseUrl, token: TOKEN, requestTimeoutMs: 700, retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } });
        const { journal, replay } = await openJournal(path);
        const logs: string[] = [];
        try {
          const store = TraceStore.fromRecords(replay.records);
          const summary = await runEvaluation({ client, kind: 'benchmark', evaluationId: 7, target, journal, store, concurrency: 2, submitRounds: 1, servicePatienceMs: 1_000, onLog: (_l, m) => logs.push(m) });
          return { summary, logs };
        } finally {
          await journal.close();
          await client.close();
        }
      };
      try {
        const { summary } = await run();
        assert.equal(summary.outcome, c.outcome, summary.message);
        const said = c.on === 'list' ? summary.message ?? '' : [summary.message ?? '', ...summary.failed.map((f) => f.reason)].join(' | ');
        assert.match(said, c.says);
        assert.doesNotMatch(said, /undefined|\[object |at .+\.js:\d+/, 'no raw internals in what the user reads');
        assert.ok(!said.includes(TOKEN), 'never the token');
        assert.equal(service.tokensSeenElsewhere, 0, 'the token never went to another origin');

        const text = readFileSync(path, 'utf8');
        assert.ok(text.startsWith(before), 'the journal keeps what it had');
        const { records, corruptLines, tornTail } = parseJournal(text);
        assert.equal(corruptLines, 0);
        assert.equal(tornTail, false);
        if (c.on === 'submit') {
          // Every answer the target gave is on disk (a run that stopped early asked for fewer).
          const answers = records.filter((r) => r.t === 'answer').map((r) => (r as { id: string }).id).sort();
          assert.equal(answers.length, 1 + target.total(), 'one journaled answer per target call, plus the kept one');
          if (c.outcome === 'failedTraces') assert.deepEqual(answers, ['t1', 't2', 't3']);
        }

        misbehave = false;
        const callsBefore = target.total();
        const again = await run();
        assert.equal(again.summary.outcome, 'completed', again.summary.message);
        assert.equal(again.summary.counts.submitted, 3);
        const kept = parseJournal(readFileSync(path, 'utf8')).records.filter((r) => r.t === 'answer' && r.id === 't1');
        assert.deepEqual(kept.map((r) => (r as { a: string }).a), ['kept answer'], 'the earlier answer was submitted, never recomputed');
        assert.ok(target.total() - callsBefore <= 2, 'only never-answered traces reach the target');
        assert.deepEqual(unhandled, [], 'no unhandled rejection or exception');
      } finally {
        await service.close();
      }
    });
  }
});
