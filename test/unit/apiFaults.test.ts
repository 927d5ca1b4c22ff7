import assert from 'node:assert/strict';
import { createApiClient } from '../../src/api/client';
import type { ApiClientOptions, RetryEvent } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';
import { plainEnvelope } from '../../src/api/errorMapping';
import { envelopeSchema } from '../../src/api/schemas';
import { backoffDelay, DEFAULT_RETRY_POLICY, parseRetryAfter } from '../../src/api/retry';
import { FAST_RETRY, json, ok, scriptedServer } from './helpers/servers';
import type { ScriptedServer } from './helpers/servers';

const TOKEN = 'test-token-abcdef';
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function clientFor(url: string, extra: Partial<ApiClientOptions> = {}) {
  return createApiClient({ baseUrl: url, token: TOKEN, retry: FAST_RETRY, ...extra });
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
  return error;
}

/** Answers the listed statuses in turn (then 200 with an empty list / a success text). */
async function statuses(list: number[], body: unknown = { code: 'req_x', message: 'nope', data: null, success: false }) {
  return scriptedServer((req, res, _seen, i) => {
    const status = list[i];
    if (status === undefined) json(res, 200, ok(req.method === 'GET' ? [] : 'recorded'));
    else json(res, status, body);
  });
}

describe('API client retries', () => {
  it('retries a GET on 5xx and succeeds', async () => {
    server = await statuses([500, 502]);
    const c = clientFor(server.url);
    assert.deepEqual(await c.listPrompts('benchmark', 1), []);
    await c.close();
    assert.equal(server.seen.length, 3);
  });

  it('stops after 4 attempts in all', async () => {
    server = await statuses([500, 500, 500, 500, 500, 500]);
    const c = clientFor(server.url);
    const error = await failure(c.listPrompts('benchmark', 1));
    await c.close();
    assert.equal(error.reason, 'server');
    assert.equal(error.status, 500);
    assert.equal(server.seen.length, 4);
  });

  it('retries a GET on 408 and 429 but not on 400 or 404', async () => {
    server = await statuses([408, 429]);
    let c = clientFor(server.url);
    await c.listPrompts('benchmark', 1);
    await c.close();
    assert.equal(server.seen.length, 3);
    for (const status of [400, 404]) {
      await server.close();
      server = await statuses([status]);
      c = clientFor(server.url);
      await failure(c.listPrompts('benchmark', 1));
      await c.close();
      assert.equal(server.seen.length, 1, `HTTP ${status} is not retried`);
    }
  });

  it('retries a POST on 429/502/503/504 only', async () => {
    server = await statuses([429, 502, 503]);
    let c = clientFor(server.url);
    await c.submitAnswer('benchmark', 1, 't', 'a');
    await c.close();
    assert.equal(server.seen.length, 4);
    for (const status of [500, 408, 400, 409]) {
      await server.close();
      server = await statuses([status]);
      c = clientFor(server.url);
      await failure(c.submitAnswer('benchmark', 1, 't', 'a'));
      await c.close();
      assert.equal(server.seen.length, 1, `POST with HTTP ${status} is not retried`);
    }
  });

  it('honours Retry-After in seconds', async () => {
    server = await scriptedServer((_req, res, _s, i) => {
      if (i === 0) json(res, 429, { success: false, message: 'slow down' }, { 'retry-after': '1' });
      else json(res, 200, ok('recorded'));
    });
    const retries: RetryEvent[] = [];
    const c = clientFor(server.url, { onRetry: (e) => retries.push(e) });
    await c.submitAnswer('robustness', 2, 't', 'a');
    await c.close();
    assert.equal(retries.length, 1);
    assert.equal(retries[0]!.delayMs, 1000);
    assert.equal(retries[0]!.error.reason, 'rateLimited');
    assert.ok(server.seen[1]!.at - server.seen[0]!.at >= 950, 'the second attempt came after the Retry-After pause');
  });

  it('gives up at once when Retry-After is beyond 60 s', async () => {
    server = await scriptedServer((_req, res) => json(res, 429, { success: false }, { 'retry-after': '120' }));
    const c = clientFor(server.url);
    const error = await failure(c.listPrompts('benchmark', 1));
    await c.close();
    assert.equal(error.reason, 'rateLimited');
    assert.equal(error.retryAfterMs, 120_000);
    assert.equal(server.seen.length, 1);
  });

  it('retries dropped connections for GET and POST', async () => {
    server = await scriptedServer((req, res, _s, i) => {
      if (i % 2 === 0) res.socket?.destroy();
      else json(res, 200, ok(req.method === 'GET' ? [] : 'ok'));
    });
    const c = clientFor(server.url);
    await c.listPrompts('benchmark', 1);
    await c.submitAnswer('benchmark', 1, 't', 'a');
    await c.close();
    assert.equal(server.seen.length, 4);
  });

  it('reports a refused connection as a network error after retrying', async () => {
    server = await scriptedServer(() => undefined);
    const url = server.url;
    await server.close();
    server = undefined;
    const retries: RetryEvent[] = [];
    const c = clientFor(url, { onRetry: (e) => retries.push(e) });
    const error = await failure(c.submitAnswer('benchmark', 1, 't', 'a'));
    await c.close();
    assert.equal(error.reason, 'network');
    assert.equal(error.transportCode, 'ECONNREFUSED');
    assert.match(error.message, /Could not reach the service/);
    assert.equal(retries.length, 3);
  });

  it('times out a silent service; retries the GET, not the POST', async () => {
    server = await scriptedServer(() => undefined);
    const c = clientFor(server.url, { requestTimeoutMs: 150 });
    const getError = await failure(c.listPrompts('benchmark', 1));
    assert.equal(getError.reason, 'timeout');
    assert.equal(server.seen.length, 4);
    const postError = await failure(c.submitAnswer('benchmark', 1, 't', 'a'));
    assert.equal(postError.reason, 'timeout');
    assert.equal(server.seen.length, 5);
    await c.close();
  });

  it('computes full-jitter backoff and reads Retry-After dates', () => {
    for (let attempt = 1; attempt < 10; attempt++) {
      assert.equal(backoffDelay(attempt, DEFAULT_RETRY_POLICY, () => 0), 0);
      const top = backoffDelay(attempt, DEFAULT_RETRY_POLICY, () => 0.999999);
      assert.ok(top <= Math.min(DEFAULT_RETRY_POLICY.maxDelayMs, DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** (attempt - 1)));
    }
    const now = Date.parse('2026-11-21T10:00:00Z');
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('7', now), 7000);
    assert.equal(parseRetryAfter('soon', now), undefined);
  });
});

describe('API client response validation', () => {
  const cases: Array<{ name: string; status: number; body: string; reason: ApiError['reason']; message: RegExp; get?: boolean }> = [
    { name: 'an HTML page', status: 200, body: '<!DOCTYPE html><html><body>Login</body></html>', reason: 'format', message: /HTML page instead of JSON/ },
    { name: 'truncated JSON', status: 200, body: '{"code":"req_1","message":"ok","data":[{"traceId":"a"', reason: 'format', message: /truncated or invalid JSON/ },
    { name: 'an empty body', status: 200, body: '', reason: 'format', message: /an empty body/ },
    { name: 'success:false with 200', status: 200, body: '{"code":"req_9","message":"Evaluation closed","data":null,"success":false}', reason: 'rejected', message: /Evaluation closed/ },
    { name: 'no envelope', status: 200, body: '[1,2,3]', reason: 'format', message: /not the expected envelope/ },
    { name: 'a bad prompt item, with its index', status: 200, body: JSON.stringify(ok([{ traceId: 'a', content: 'x' }, { traceId: 7, content: 'y' }])), reason: 'format', message: /item 1: traceId/, get: true },
    { name: 'data null on a list', status: 200, body: JSON.stringify(ok(null)), reason: 'format', message: /prompt list is malformed/, get: true },
    { name: 'success as text on a submit', status: 200, body: '{"code":"req_1","message":"ok","data":"x","success":"yes"}', reason: 'format', message: /not the expected envelope .*success: expected boolean/ },
    { name: 'an HTML 502 from a proxy', status: 502, body: '<html><body>Bad gateway</body></html>', reason: 'server', message: /HTTP 502/ },
  ];
  for (const c of cases) {
    it(`turns ${c.name} into a clear ${c.reason} error`, async () => {
      server = await scriptedServer((_req, res) => {
        res.writeHead(c.status, { 'content-type': c.body.startsWith('<') ? 'text/html' : 'application/json' });
        res.end(c.body);
      });
      const client = clientFor(server.url, { retry: { maxAttempts: 1 } });
      const error = await failure(c.get ? client.listPrompts('benchmark', 1) : client.submitAnswer('benchmark', 1, 't', 'a'));
      await client.close();
      assert.equal(error.reason, c.reason);
      assert.match(error.message, c.message);
      assert.ok(error.hint.length > 10, 'carries a next step');
    });
  }

  it("takes a plain envelope without zod only as the schema would: the same envelopes, the same data", () => {
    const bodies = ['[]', 'null', '{}', '"ok"', '{"success":"true"}', '{"__proto__":{"success":true}}', '{"success":false}', '{"success":true,"data":[1]}', '{"code":7,"message":null,"success":true,"extra":1}'];
    for (const body of bodies) {
      const parsed: unknown = JSON.parse(body);
      const fast = plainEnvelope(parsed);
      const schema = envelopeSchema.safeParse(parsed);
      if (fast) assert.deepEqual([fast.data.success, fast.data.data], [schema.data?.success, schema.data?.data], body);
      else assert.equal(schema.success, false, `${body}: the schema takes what the fast path leaves to it`);
    }
  });

  it('ignores extra fields on prompt items', async () => {
    server = await scriptedServer((_req, res) => json(res, 200, ok([{ traceId: 'a', content: 'x', extra: 1, nested: {} }])));
    const c = clientFor(server.url);
    assert.deepEqual(await c.listPrompts('benchmark', 1), [{ traceId: 'a', content: 'x' }]);
    await c.close();
  });

  it('refuses a body over the size limit', async () => {
    server = await scriptedServer((_req, res) => json(res, 200, ok([{ traceId: 'a', content: 'x'.repeat(3 * 1024 * 1024) }])));
    const c = clientFor(server.url, { maxListBytes: 1024 * 1024 });
    const error = await failure(c.listPrompts('benchmark', 1));
    await c.close();
    assert.equal(error.reason, 'tooLarge');
  });

  it('redacts the token when the service echoes it', async () => {
    server = await scriptedServer((req, res) =>
      json(res, 401, { success: false, message: `bad token ${String(req.headers.authorization).slice(7)}` }),
    );
    const c = clientFor(server.url);
    const error = await failure(c.listPrompts('benchmark', 1));
    await c.close();
    assert.ok(!error.message.includes(TOKEN));
    assert.ok(!String(error.serviceMessage).includes(TOKEN));
    assert.match(error.message, /\[redacted\]/);
  });
});

describe('API client redirects', () => {
  it('does not carry the token to another origin', async () => {
    const other = await scriptedServer((_req, res) => json(res, 200, ok([])));
    server = await scriptedServer((_req, res) => {
      res.writeHead(302, { location: `${other.url}/api/evaluation/promptsAll?evaluationId=1` });
      res.end();
    });
    const c = clientFor(server.url);
    const error = await failure(c.listPrompts('benchmark', 1));
    await c.close();
    await other.close();
    assert.equal(error.reason, 'redirect');
    assert.match(error.message, /another origin/);
    assert.equal(other.seen.length, 0);
  });

  it('follows a same-origin redirect with the token, and stops a loop', async () => {
    server = await scriptedServer((req, res) => {
      if (req.url?.startsWith('/old/')) {
        res.writeHead(301, { location: req.url.replace('/old/', '/') });
        res.end();
      } else if (req.url?.startsWith('/loop')) {
        res.writeHead(302, { location: '/loop/api/evaluation/promptsAll?evaluationId=1' });
        res.end();
      } else json(res, 200, ok([{ traceId: 'a', content: 'b' }]));
    });
    let c = clientFor(`${server.url}/old`);
    assert.equal((await c.listPrompts('benchmark', 1)).length, 1);
    await c.close();
    assert.equal(server.seen[1]!.headers.authorization, `Bearer ${TOKEN}`);
    c = clientFor(`${server.url}/loop`);
    const error = await failure(c.listPrompts('benchmark', 1));
    await c.close();
    assert.match(error.message, /redirected more than 5 times/);
  });
});
