import assert from 'node:assert/strict';
import { createApiClient } from '../../src/api/client';
import type { ApiClient } from '../../src/api/client';
import { ApiError, AuthError, NotReadyError } from '../../src/api/errors';
import { EVALUATION_KINDS } from '../../src/api/evaluationKinds';
import type { RequestEncoding } from '../../src/api/evaluationKinds';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { FAST_RETRY } from './helpers/servers';

const TRICKY_TRACE_IDS = ['a+b', 'x&y=z', '100%', '%20 encoded', 'path/with/slashes', ' spaced id ', 'ünïcødé-Ω-🌍', '=&+%/'];
const TRICKY_ANSWERS = [
  '  leading and trailing spaces  ',
  'line1\r\nline2\nline3\r',
  'nul\u0000byte',
  '<script>alert(1)</script> & "quotes" \'single\'',
  '+plus+ %41 &amp; =equals=',
  'x'.repeat(200 * 1024) + '\u00e9\ud83c\udf0d',
  '',
];

describe('API client against the sandbox', function () {
  let sandbox: Sandbox;
  let client: ApiClient;

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 0, evaluationSeconds: 0 });
    client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, retry: FAST_RETRY });
  });
  afterEach(async () => {
    await client.close();
    await sandbox.close();
  });

  it('lists the prompts of each kind, tricky ones intact', async () => {
    const bench = await client.listPrompts('benchmark', 1);
    const adv = await client.listPrompts('robustness', 2);
    assert.equal(bench.length, 25);
    assert.equal(adv.length, 20);
    assert.ok(bench.some((p) => p.content.includes('<script>')));
    assert.ok(bench.some((p) => p.content.includes('\r\n')));
    assert.ok(bench.some((p) => p.content.length > 20_000));
    assert.ok(bench.some((p) => p.traceId === 'bench a+b&c=d%20/ü'));
    assert.deepEqual(Object.keys(bench[0]!).sort(), ['content', 'traceId']);
  });

  for (const kind of EVALUATION_KINDS) {
    for (const encoding of ['urlencoded', 'multipart'] as RequestEncoding[]) {
      it(`submits ${kind} answers over ${encoding}, every character and the seeded tricky trace ids intact`, async () => {
        const c = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, encoding });
        try {
          const id = kind === 'benchmark' ? 1 : 2;
          const prompts = await c.listPrompts(kind, id);
          for (let i = 0; i < TRICKY_ANSWERS.length; i++) {
            const trace = prompts[i % prompts.length]!;
            const result = await c.submitAnswer(kind, id, trace.traceId, TRICKY_ANSWERS[i]!);
            assert.equal(result.data.length > 0, true);
            assert.match(result.requestCode ?? '', /^req_/);
            assert.equal(sandbox.answerOf(id, trace.traceId), TRICKY_ANSWERS[i]);
          }
        } finally {
          await c.close();
        }
      });
    }
  }

  it('sends tricky trace ids back byte for byte, in both encodings', async () => {
    for (const encoding of ['urlencoded', 'multipart'] as RequestEncoding[]) {
      const c = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, encoding });
      for (const traceId of TRICKY_TRACE_IDS) {
        // The sandbox answers 404 naming the trace id it decoded: proof of what arrived.
        const error = await c.submitAnswer('benchmark', 1, traceId, 'a').catch((e: unknown) => e);
        assert.ok(error instanceof ApiError);
        assert.equal(error.reason, 'notFound');
        assert.equal(error.serviceMessage, `Evaluation 1 has no trace ${JSON.stringify(traceId)}.`);
      }
      await c.close();
    }
  });

  it('turns a wrong token into an AuthError that never shows the token', async () => {
    const secret = 'tok-very-secret-123';
    const c = createApiClient({ baseUrl: sandbox.baseUrl, token: secret });
    const error = await c.listPrompts('benchmark', 1).catch((e: unknown) => e);
    await c.close();
    assert.ok(error instanceof AuthError);
    assert.equal(error.status, 401);
    assert.match(error.message, /rejected the personal access token/);
    assert.ok(!JSON.stringify({ ...error, message: error.message, stack: error.stack }).includes(secret));
  });

  it('reports an unknown evaluation or the wrong kind as notFound with the service message', async () => {
    const error = await client.listPrompts('robustness', 1).catch((e: unknown) => e);
    assert.ok(error instanceof ApiError);
    assert.equal(error.reason, 'notFound');
    assert.equal(error.status, 404);
    assert.match(error.message, /No robustness evaluation with id 1/);
    assert.match(error.message, /Check the base URL, the evaluation id and its kind/);
  });

  it('rejects an oversized answer with tooLarge (413)', async () => {
    const small = await startSandbox({ port: 0, maxBodyBytes: 4096 });
    const c = createApiClient({ baseUrl: small.baseUrl, token: small.token });
    const error = await c.submitAnswer('benchmark', 1, 'bench-0000', 'y'.repeat(100_000)).catch((e: unknown) => e);
    await c.close();
    await small.close();
    assert.ok(error instanceof ApiError);
    assert.equal(error.reason, 'tooLarge');
    assert.equal(error.status, 413);
  });

  it('refuses invalid evaluation ids before sending anything', async () => {
    await assert.rejects(() => client.listPrompts('benchmark', 1.5), RangeError);
    await assert.rejects(() => client.listPrompts('benchmark', -1), RangeError);
    assert.equal(sandbox.stats.requests.size, 0);
  });
});

describe('waiting for adversarial prompts', function () {
  it('treats 409 before generation as NotReadyError, then ends when generation does', async () => {
    const sandbox = await startSandbox({ port: 0, generationSeconds: 1.2 });
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token });
    try {
      await assert.rejects(() => client.listPrompts('robustness', 2), NotReadyError);
      const waits: string[] = [];
      const items = await client.waitForPrompts('robustness', 2, {
        timeoutMs: 20_000,
        maxPollIntervalMs: 200,
        onWait: (e) => waits.push(e.reason),
      });
      assert.equal(items.length, 20);
      assert.ok(waits.length >= 1, 'each wait is reported');
      assert.ok(waits.every((r) => r === 'generation is not finished'));
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('gives up with NotReadyError when the time limit passes', async () => {
    const sandbox = await startSandbox({ port: 0, generationSeconds: 600 });
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token });
    try {
      const error = await client
        .waitForPrompts('robustness', 2, { timeoutMs: 300, maxPollIntervalMs: 100 })
        .catch((e: unknown) => e);
      assert.ok(error instanceof NotReadyError);
      assert.match(error.message, /not ready within 0 s \(generation is not finished\)/);
      assert.match(error.serviceMessage ?? '', /still running/);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('ends at once when the caller cancels', async function () {
    this.timeout(5000);
    const sandbox = await startSandbox({ port: 0, generationSeconds: 600 });
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token });
    const controller = new AbortController();
    try {
      const pending = client.waitForPrompts('robustness', 2, { timeoutMs: 600_000, signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      const error = await pending.catch((e: unknown) => e);
      assert.equal((error as Error).name, 'AbortError');
      assert.ok(!(error instanceof ApiError));
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('does not wait on a rejected token', async () => {
    const sandbox = await startSandbox({ port: 0, generationSeconds: 600 });
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: 'wrong-token' });
    try {
      await assert.rejects(() => client.waitForPrompts('robustness', 2, { timeoutMs: 60_000 }), AuthError);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});
