import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { createApiClient } from '../../src/api/client';
import type { ApiClientOptions } from '../../src/api/client';
import { ApiError, NotReadyError } from '../../src/api/errors';
import type { PromptItem } from '../../src/api/schemas';
import { clientFor, serviceArgs } from '../../src/cli/common';
import { streamPromptsOf } from '../../src/core/run/promptList';
import { generatedPrompt } from '../../src/sandbox/serviceApi';
import { startSandbox } from '../../src/sandbox/server';
import { FAST_RETRY, json, ok, scriptedServer } from './helpers/servers';
import type { ScriptedServer } from './helpers/servers';

const TOKEN = 'stream-token-abcdef';
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function client(url: string, extra: Partial<ApiClientOptions> = {}) {
  return createApiClient({ baseUrl: url, token: TOKEN, retry: FAST_RETRY, requestTimeoutMs: 10_000, ...extra });
}

const items = (n: number, bytes = 100): PromptItem[] => Array.from({ length: n }, (_, i) => ({ traceId: `t${i}`, content: generatedPrompt(i, bytes) }));

/** Writes text in pieces as the socket takes them; `written` counts what it has handed to the socket. */
function writeSlowly(res: ServerResponse, text: string, progress: { written: number; blocked: boolean }, stopAt = Infinity): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const bytes = Buffer.from(text);
  let at = 0;
  const pump = () => {
    while (at < bytes.length) {
      if (at >= stopAt) {
        res.destroy();
        return;
      }
      const piece = bytes.subarray(at, Math.min(at + 16 * 1024, bytes.length, stopAt));
      at += piece.length;
      progress.written = at;
      if (!res.write(piece)) {
        progress.blocked = true;
        res.once('drain', () => {
          progress.blocked = false;
          pump();
        });
        return;
      }
    }
    res.end();
  };
  pump();
}

describe('the prompt list, read as it streams in', function () {
  this.timeout(60_000);

  it('hands every item of the sandbox list to the sink in batches of at most 1,000, in order', async () => {
    const sandbox = await startSandbox({ port: 0, generatedList: { evaluationId: 9, traces: 4321, promptBytes: 300 } });
    const c = client(sandbox.baseUrl, { token: sandbox.token });
    try {
      const got: PromptItem[] = [];
      const sizes: number[] = [];
      const result = await c.streamPrompts('benchmark', 9, async (batch) => {
        sizes.push(batch.length);
        got.push(...batch);
        await new Promise((r) => setImmediate(r));
      });
      assert.equal(result.count, 4321);
      assert.ok(sizes.every((n) => n <= 1000) && sizes.length >= 5, `batches: ${sizes.join(',')}`);
      assert.deepEqual(got, Array.from({ length: 4321 }, (_, i) => ({ traceId: `g${i}`, content: generatedPrompt(i, 300) })));
      // The core's door to it, and the whole-list wrapper, say the same.
      let viaCore = 0;
      assert.equal((await streamPromptsOf(c, 'benchmark', 9, (b) => Promise.resolve(void (viaCore += b.length)))).count, 4321);
      assert.equal(viaCore, 4321);
      assert.deepEqual(await c.listPrompts('benchmark', 9), got);
    } finally {
      await c.close();
      await sandbox.close();
    }
  });

  it('pauses the body while the sink works: the server cannot send more than the socket buffers hold', async () => {
    const list = items(40_000, 1000); // about 41 MB
    const progress = { written: 0, blocked: false };
    server = await scriptedServer((_req, res) => writeSlowly(res, JSON.stringify(ok(list)), progress));
    const c = client(server.url);
    let calls = 0;
    let held = 0;
    const result = await c.streamPrompts('benchmark', 1, async () => {
      if (++calls !== 1) return;
      // The first batch is held: the server fills the sockets' buffers, then has to wait until the sink is done.
      let last = -1;
      const end = Date.now() + 20_000;
      while (progress.written !== last && Date.now() < end) {
        last = progress.written;
        await new Promise((r) => setTimeout(r, 400));
      }
      held = progress.written;
      assert.ok(progress.blocked, 'the server waits for the client');
    });
    await c.close();
    assert.equal(result.count, 40_000);
    const total = Buffer.byteLength(JSON.stringify(ok(list)));
    assert.ok(held < 16 * 1024 * 1024 && held < total / 2, `the server got ${held} of ${total} bytes out while the sink held the first batch`);
  });

  it('keeps the envelope\'s meaning: not ready before any item, a failure said after the data, a malformed item', async () => {
    server = await scriptedServer((req, res) => {
      if (req.url?.includes('all-adv-prompts')) return json(res, 409, { code: 'req_g', message: 'generating', data: null, success: false });
      if (req.url?.includes('evaluationId=2')) return json(res, 200, `{"data":${JSON.stringify(items(3))},"message":"archived ${TOKEN}","success":false}`);
      return json(res, 200, ok([...items(2), { traceId: '', content: 'x' }]));
    });
    const c = client(server.url);
    const seen: PromptItem[] = [];
    const sink = (b: PromptItem[]) => Promise.resolve(void seen.push(...b));
    const notReady = await c.streamPrompts('robustness', 1, sink).catch((e: unknown) => e);
    assert.ok(notReady instanceof NotReadyError, String(notReady));
    assert.equal(seen.length, 0);
    const failed = await c.streamPrompts('benchmark', 2, sink).catch((e: unknown) => e);
    assert.ok(failed instanceof ApiError && failed.reason === 'rejected', String(failed));
    assert.match(failed.message, /reported a failure.*archived \[redacted\]/);
    assert.ok(!failed.message.includes(TOKEN));
    const malformed = await c.streamPrompts('benchmark', 3, sink).catch((e: unknown) => e);
    assert.ok(malformed instanceof ApiError && malformed.reason === 'format', String(malformed));
    assert.match(malformed.message, /prompt list is malformed \(item 2: traceId: empty\)/);
    await c.close();
  });

  it('a connection dropped midway: read again, the items the sink has skipped, each handed on once', async () => {
    const list = items(5000, 200);
    const text = JSON.stringify(ok(list));
    server = await scriptedServer((_req, res, _seen, i) => writeSlowly(res, text, { written: 0, blocked: false }, i === 0 ? Math.floor(text.length / 2) : Infinity));
    const c = client(server.url);
    const got: PromptItem[] = [];
    const result = await c.streamPrompts('benchmark', 1, (b) => Promise.resolve(void got.push(...b)));
    await c.close();
    assert.equal(server.seen.length, 2, 'asked twice');
    assert.equal(result.count, 5000);
    assert.deepEqual(got, list);
  });

  it('a list that changed when read again is refused, not spliced', async () => {
    const first = JSON.stringify(ok(items(3000, 200)));
    const second = JSON.stringify(ok(items(3000, 200).reverse()));
    server = await scriptedServer((_req, res, _seen, i) => writeSlowly(res, i === 0 ? first : second, { written: 0, blocked: false }, i === 0 ? Math.floor(first.length / 2) : Infinity));
    const c = client(server.url);
    const error = await c.streamPrompts('benchmark', 1, () => Promise.resolve()).catch((e: unknown) => e);
    await c.close();
    assert.ok(error instanceof ApiError && error.reason === 'format', String(error));
    assert.match(error.message, /listed other prompts when asked again/);
  });

  it('a sink that fails stops the list with its own error', async () => {
    server = await scriptedServer((_req, res) => json(res, 200, ok(items(3000))));
    const c = client(server.url);
    const boom = new Error('disk full (test)');
    const error = await c.streamPrompts('benchmark', 1, () => Promise.reject(boom)).catch((e: unknown) => e);
    await c.close();
    assert.equal(error, boom);
    assert.equal(server.seen.length, 1, 'not asked again');
  });

  it('the guard against a runaway list names the flag and the setting; --max-list-mb sets it', async () => {
    const sandbox = await startSandbox({ port: 0, generatedList: { evaluationId: 9, traces: 3000, promptBytes: 1000 } });
    const c = clientFor(serviceArgs({ 'base-url': sandbox.baseUrl, evaluation: '9', kind: 'benchmark', 'max-list-mb': '2' }), sandbox.token);
    try {
      let given = 0;
      const error = await c.streamPrompts('benchmark', 9, (b) => Promise.resolve(void (given += b.length))).catch((e: unknown) => e);
      assert.ok(error instanceof ApiError && error.reason === 'tooLarge', String(error));
      assert.match(error.message, /prompt list was larger than 2 MB/);
      assert.match(error.message, /raise --max-list-mb \(CLI\) or evalRunner\.maxListMegabytes \(editor\)/);
      assert.ok(given < 3000, 'stopped before the end');
      // The default lets the same list through.
      const roomy = clientFor(serviceArgs({ 'base-url': sandbox.baseUrl, evaluation: '9', kind: 'benchmark' }), sandbox.token);
      assert.equal((await roomy.listPrompts('benchmark', 9)).length, 3000);
      await roomy.close();
    } finally {
      await c.close();
      await sandbox.close();
    }
  });
});
