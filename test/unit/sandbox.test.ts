import assert from 'node:assert/strict';
import { EVALUATION_KINDS } from '../../src/api/evaluationKinds';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';

/** Raw requests: the API client can never send a wrong field, so the sandbox's own checks are driven by hand. */
/** The service's envelope, as the tests read it. */
interface Envelope {
  success: boolean;
  code: string;
  message: string;
  data: unknown;
}

async function raw(sandbox: Sandbox, path: string, init: { method?: string; body?: string; token?: string | null; type?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? sandbox.token}`;
  if (init.body !== undefined) headers['content-type'] = init.type ?? 'application/x-www-form-urlencoded';
  const res = await fetch(sandbox.baseUrl + path, { method: init.method ?? (init.body ? 'POST' : 'GET'), headers, body: init.body });
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Envelope) : undefined;
  return { status: res.status, text, json: json! };
}

describe('sandbox service', () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 0.3, evaluationSeconds: 0.2 });
  });
  afterEach(() => sandbox.close());

  it('answers every error with an envelope and the right status', async () => {
    const cases: Array<[string, Parameters<typeof raw>[2], number, RegExp]> = [
      ['/api/evaluation/promptsAll?evaluationId=1', { token: null }, 401, /Missing Authorization/],
      ['/api/evaluation/promptsAll?evaluationId=1', { token: 'nope' }, 401, /not valid/],
      // Near misses of sandbox-token: its length with one letter off, a prefix of it, it with more after.
      ['/api/evaluation/promptsAll?evaluationId=1', { token: 'sandbox-tokeN' }, 401, /not valid/],
      ['/api/evaluation/promptsAll?evaluationId=1', { token: 'sandbox-toke' }, 401, /not valid/],
      ['/api/evaluation/promptsAll?evaluationId=1', { token: 'sandbox-token2' }, 401, /not valid/],
      ['/api/evaluation/promptsAll?evaluationId=x', {}, 400, /must be a number/],
      ['/api/evaluation/promptsAll?evaluationId=9', {}, 404, /No benchmark evaluation with id 9/],
      ['/api/evaluation/all-adv-prompts?evaluationId=2', {}, 409, /still running/],
      ['/api/evaluation/nope', {}, 404, /No route/],
      ['/api/evaluation/response', { body: 'evaluationId=1&traceId=bench-0000' }, 400, /llmResponse is required/],
      ['/api/evaluation/response', { body: 'traceId=bench-0000&llmResponse=a' }, 400, /evaluationId is required/],
      ['/api/evaluation/response', { body: 'evaluationId=1&llmResponse=a' }, 400, /traceId is required/],
      ['/api/evaluation/response', { body: 'evaluationId=1&traceId=bench-0000&advResponse=a' }, 400, /advResponse is not accepted/],
      ['/api/evaluation/adv-response', { body: 'evaluationId=2&traceId=adv-0000&llmResponse=a' }, 400, /llmResponse is not accepted/],
      ['/api/evaluation/response', { body: 'evaluationId=1&traceId=nope&llmResponse=a' }, 404, /has no trace "nope"/],
      ['/api/evaluation/response', { body: '{"a":1}', type: 'application/json' }, 415, /must be application/],
      ['/api/evaluation/response', { body: 'garbage', type: 'multipart/form-data; boundary=zzz' }, 400, /malformed/],
    ];
    for (const [path, init, status, message] of cases) {
      const r = await raw(sandbox, path, init);
      assert.equal(r.status, status, `${path} ${init?.body ?? ''}`);
      assert.equal(r.json.success, false);
      assert.match(r.json.code, /^req_[0-9a-f]+$/);
      assert.match(r.json.message, message);
    }
  });

  it('moves traces Awaiting Trigger → Sent → Responded → Evaluated, and completes the evaluation', async () => {
    assert.equal(sandbox.summary(1)!.counts['Awaiting Trigger'], 25);
    const list = await raw(sandbox, '/api/evaluation/promptsAll?evaluationId=1');
    assert.equal(list.json.success, true);
    assert.equal(sandbox.summary(1)!.counts.Sent, 25);
    for (const item of list.json.data as Array<{ traceId: string }>) {
      const body = new URLSearchParams({ evaluationId: '1', traceId: item.traceId, llmResponse: 'answer' }).toString();
      assert.equal((await raw(sandbox, '/api/evaluation/response', { body })).status, 200);
    }
    // Each answer is evaluated 0.2 s after it came: on a loaded machine the first may be before the last is sent.
    const counts = sandbox.summary(1)!.counts;
    assert.equal(counts.Responded + counts.Evaluated, 25);
    if (counts.Evaluated < 25) assert.equal(sandbox.summary(1)!.state, 'In Progress');
    // Polled, not slept: the evaluator's timers run late under load, never early.
    for (let waited = 0; sandbox.summary(1)!.counts.Evaluated < 25 && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    assert.equal(sandbox.summary(1)!.counts.Evaluated, 25);
    assert.equal(sandbox.summary(1)!.state, 'Completed');
  });

  it('replaces an earlier answer with a later one', async () => {
    for (const answer of ['first', 'second']) {
      await raw(sandbox, '/api/evaluation/response', { body: new URLSearchParams({ evaluationId: '1', traceId: 'bench-0000', llmResponse: answer }).toString() });
    }
    assert.equal(sandbox.answerOf(1, 'bench-0000'), 'second');
    assert.equal(sandbox.submissionsOf(1, 'bench-0000'), 2);
  });

  it('serves robustness prompts once generation ends', async () => {
    await new Promise((r) => setTimeout(r, 350));
    const r = await raw(sandbox, '/api/evaluation/all-adv-prompts?evaluationId=2');
    assert.equal(r.status, 200);
    assert.equal((r.json.data as unknown[]).length, 20);
  });

  it('shows a self-refreshing Process Details page with every string escaped', async () => {
    await raw(sandbox, '/api/evaluation/response', {
      body: new URLSearchParams({ evaluationId: '1', traceId: 'bench-0003', llmResponse: '<img src=x onerror=alert(1)>' }).toString(),
    });
    const page = await raw(sandbox, '/evaluations/1');
    assert.equal(page.status, 200);
    assert.match(page.text, /http-equiv="refresh"/);
    assert.match(page.text, /Responded/);
    assert.ok(!page.text.includes('<img src=x'), 'answers are escaped');
    assert.ok(!page.text.includes('<script>window'), 'prompts are escaped');
    assert.match(page.text, /&#60;img src=x onerror=alert\(1\)&#62;/);
    assert.equal((await raw(sandbox, '/evaluations/77')).status, 404);
  });

  it('injects 503s at the configured rate', async () => {
    const flaky = await startSandbox({ port: 0, failRate: 1 });
    const r = await raw(flaky, '/api/evaluation/promptsAll?evaluationId=1');
    await flaky.close();
    assert.equal(r.status, 503);
    assert.match(r.json.message, /injected/);
  });
});

describe('sandbox port', () => {
  it('prefers its port and, when another sandbox holds it, serves on a free one', async () => {
    const first = await startSandbox({ port: 0 });
    const port = Number(new URL(first.baseUrl).port);
    try {
      await assert.rejects(startSandbox({ port }), /EADDRINUSE/);
      const second = await startSandbox({ port, anyPortIfTaken: true });
      try {
        assert.notEqual(second.baseUrl, first.baseUrl);
        assert.equal((await raw(second, '/api/evaluation/promptsAll?evaluationId=1')).status, 200);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
    // Free again: the preferred port is the one taken.
    const again = await startSandbox({ port, anyPortIfTaken: true });
    await again.close();
    assert.equal(new URL(again.baseUrl).port, String(port));
  });
});

describe('sandbox seed', () => {
  it('seeds distinct trace ids and distinct prompts, at any size', () => {
    for (const kind of EVALUATION_KINDS) {
      const items = seedPrompts(kind, 5000);
      assert.equal(new Set(items.map((i) => i.traceId)).size, 5000);
      assert.equal(new Set(items.map((i) => i.content)).size, 5000);
    }
  });
});
