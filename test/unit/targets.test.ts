import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCommandTarget } from '../../src/core/targets/command/commandTarget';
import { createHttpTarget } from '../../src/core/targets/http/httpTarget';
import { createOpenAiTarget } from '../../src/core/targets/openai/openaiTarget';
import { TargetError } from '../../src/core/targets/target';
import { createWorkerTarget } from '../../src/core/targets/python/workerTarget';
import type { TargetCallOptions } from '../../src/core/targets/target';
import { startSandbox } from '../../src/sandbox/server';
import { tempDir } from './helpers/runs';
import { json, scriptedServer } from './helpers/servers';

const TRICKY = 'He said "hi"\\ \n\ttab\r\n</script> 🌍 \u0000 end  ';
const call = (timeoutMs = 10_000, signal = new AbortController().signal): TargetCallOptions => ({ signal, timeoutMs });

async function targetError(p: Promise<unknown>): Promise<TargetError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  assert.ok(e instanceof TargetError, `expected TargetError, got ${String(e)}`);
  return e;
}

describe('openai target', () => {
  it('talks to an OpenAI-compatible endpoint (the sandbox echo model)', async () => {
    const sandbox = await startSandbox({ port: 0 });
    const target = createOpenAiTarget({ baseUrl: `${sandbox.baseUrl}/v1`, model: 'echo', apiKey: 'k' });
    try {
      assert.equal(await target.send(TRICKY, call()), TRICKY);
      assert.equal(sandbox.stats.modelCalls, 1);
    } finally {
      await target.close!();
      await sandbox.close();
    }
  });

  it('sends model, system prompt, temperature, max tokens, headers and the key', async () => {
    const server = await scriptedServer((_req, res) =>
      json(res, 200, { choices: [{ message: { role: 'assistant', content: 'the answer' } }] }),
    );
    const target = createOpenAiTarget({
      baseUrl: `${server.url}/v1/`,
      model: 'm-1',
      apiKey: 'sk-test-key',
      systemPrompt: 'Be brief.',
      temperature: 0.2,
      maxTokens: 64,
      headers: { 'x-org': 'acme' },
    });
    assert.equal(await target.send('Q?', call()), 'the answer');
    await target.close!();
    await server.close();
    const seen = server.seen[0]!;
    assert.equal(seen.path, '/v1/chat/completions');
    assert.equal(seen.headers.authorization, 'Bearer sk-test-key');
    assert.equal(seen.headers['x-org'], 'acme');
    assert.deepEqual(JSON.parse(seen.body), {
      model: 'm-1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Q?' },
      ],
      temperature: 0.2,
      max_tokens: 64,
    });
    assert.ok(!target.description.includes('sk-test-key'));
  });

  it('maps 429 (with Retry-After and quota words), 5xx and a refusal', async () => {
    const server = await scriptedServer((_req, res, _s, i) => {
      if (i === 0) json(res, 429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '3' });
      else if (i === 1) json(res, 429, { error: { code: 'insufficient_quota', message: 'You exceeded your current quota' } });
      else if (i === 2) json(res, 503, { error: { message: 'overloaded' } });
      else if (i === 3) json(res, 400, { error: { message: 'bad request' } });
      else json(res, 200, { choices: [{ message: { content: null, refusal: 'I cannot help with that.' } }] });
    });
    const target = createOpenAiTarget({ baseUrl: server.url, model: 'm', apiKey: undefined });
    const limited = await targetError(target.send('a', call()));
    assert.equal(limited.kind, 'rateLimited');
    assert.equal(limited.details.retryAfterMs, 3000);
    assert.equal(limited.details.quota, false);
    const quota = await targetError(target.send('a', call()));
    assert.equal(quota.details.quota, true);
    const overloaded = await targetError(target.send('a', call()));
    assert.equal(overloaded.retryable, true);
    const bad = await targetError(target.send('a', call()));
    assert.equal(bad.retryable, false);
    assert.equal(await target.send('a', call()), 'I cannot help with that.');
    assert.equal(server.seen[0]!.headers.authorization, undefined, 'no key, no header');
    await target.close!();
    await server.close();
  });

  it('times out a silent endpoint with its own deadline', async () => {
    const server = await scriptedServer(() => undefined);
    const target = createOpenAiTarget({ baseUrl: server.url, model: 'm', apiKey: 'k' });
    const e = await targetError(target.send('a', call(150)));
    assert.equal(e.kind, 'timeout');
    await target.close!();
    await server.close();
  });
});

describe('http target', () => {
  it('inserts the prompt JSON-escaped into the template and picks the answer by path', async () => {
    const server = await scriptedServer((_req, res, seen) => {
      const body = JSON.parse(seen.body) as { input: { text: string } };
      json(res, 200, { output: [{ text: `echo:${body.input.text}` }] });
    });
    const target = createHttpTarget({
      url: `${server.url}/generate`,
      headers: { 'x-api': 'v' },
      bodyTemplate: '{"input": {"text": "{{prompt}}"}, "mode": "fast"}',
      answerPath: 'output.0.text',
    });
    assert.equal(await target.send(TRICKY, call()), `echo:${TRICKY}`);
    assert.equal(server.seen[0]!.headers['x-api'], 'v');
    assert.equal((JSON.parse(server.seen[0]!.body) as { mode: string }).mode, 'fast');
    await target.close!();
    await server.close();
  });

  it('explains a missing answer path', async () => {
    const server = await scriptedServer((_req, res) => json(res, 200, { other: 1 }));
    const target = createHttpTarget({ url: server.url, answerPath: 'choices.0.message.content' });
    const e = await targetError(target.send('x', call()));
    assert.match(e.message, /without a value at "choices.0.message.content"/);
    await target.close!();
    await server.close();
  });
});

describe('command target', () => {
  const dir = tempDir();
  const script = join(dir, 'model.sh');
  writeFileSync(script, '#!/bin/sh\nprintf "answer: "\ncat\necho\n');
  chmodSync(script, 0o755);

  it('feeds the prompt on stdin and returns stdout without one trailing newline', async () => {
    const target = createCommandTarget({ command: script });
    assert.equal(await target.send('multi\nline  ', call()), 'answer: multi\nline  ');
  });

  it('turns a non-zero exit into a target error carrying the end of stderr', async () => {
    const target = createCommandTarget({ command: 'echo "loading" >&2; echo "CUDA out of memory" >&2; exit 3' });
    const e = await targetError(target.send('x', call()));
    assert.match(e.message, /exited with 3: loading\nCUDA out of memory/);
  });

  it('kills the command (and its children) on time-out and on cancel', async () => {
    const target = createCommandTarget({ command: 'sleep 30 & sleep 30; wait' });
    const e = await targetError(target.send('x', call(200)));
    assert.equal(e.kind, 'timeout');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const cancelled = await target.send('x', call(60_000, controller.signal)).then(() => undefined, (x: unknown) => x);
    assert.ok(cancelled instanceof Error && !(cancelled instanceof TargetError));
  });
});

describe('worker target: its own time, and what the user\'s code raised', () => {
  const dir = tempDir();
  const script = join(dir, 'worker.js');
  // Answers after 100 ms; "fail" gets an error reply with a traceback (a control character in it).
  writeFileSync(
    script,
    `require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, prompt } = JSON.parse(line);
  const reply = prompt === 'fail' ? { id, error: 'ValueError: no', traceback: 'Traceback (most recent call last):\\n  File "m.py", line 2, in answer\\n\\u001b[31mValueError: no' } : { id, answer: prompt };
  setTimeout(() => process.stdout.write(JSON.stringify(reply) + '\\n'), 100);
});
`,
  );
  const worker = () => createWorkerTarget({ what: 'The worker', description: 'worker', program: process.execPath, args: [script], workers: 1, env: process.env });

  it('tells the wait for a free worker apart from the call: two at once on one worker, the second waits', async () => {
    const target = worker();
    try {
      const waits: number[] = [];
      const queued = (): TargetCallOptions => ({ ...call(), onQueued: (ms) => waits.push(ms) });
      assert.deepEqual(await Promise.all([target.send('a', queued()), target.send('b', queued())]), ['a', 'b']);
      waits.sort((x, y) => x - y);
      assert.equal(waits.length, 2);
      assert.ok(waits[1]! >= 50, `the second call waited for the first one's answer: ${waits.join(', ')} ms`);
    } finally {
      await target.close!();
    }
  });

  it('an error reply is the user\'s code failing: not a passing failure, its traceback on the next lines, escaped', async () => {
    const target = worker();
    try {
      const e = await targetError(target.send('fail', call()));
      assert.equal(e.details.userCode, true);
      assert.equal(e.message, 'The worker raised: ValueError: no\nTraceback (most recent call last):\n  File "m.py", line 2, in answer\n\\u001b[31mValueError: no');
      assert.equal(await target.send('still serves', call()), 'still serves');
    } finally {
      await target.close!();
    }
  });
});
