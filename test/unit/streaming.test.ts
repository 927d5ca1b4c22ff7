import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SseReader } from '../../src/core/targets/sse';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox, wordCount } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

describe('streaming endpoints: server-sent events, the time to first token', () => {
  it('reads events across chunk boundaries, CRLF, comments and multi-line data; [DONE] ends the stream', () => {
    const seen: string[] = [];
    const reader = new SseReader((d) => seen.push(d));
    const text = ': keep-alive\r\n\r\ndata: {"a":1}\r\n\r\nevent: x\ndata: line one\ndata: line two\n\ndata: {"é":"ü🌍"}\n\ndata: [DONE]\n\ndata: after the end\n\n';
    const bytes = Buffer.from(text, 'utf8');
    // One byte at a time: splits inside a CRLF, inside a multi-byte character and inside "[DONE]".
    for (let i = 0; i < bytes.length; i++) reader.push(bytes.subarray(i, i + 1));
    reader.end();
    assert.deepEqual(seen, ['{"a":1}', 'line one\nline two', '{"é":"ü🌍"}']);
    assert.equal(reader.done, true);
    const tail: string[] = [];
    const unterminated = new SseReader((d) => tail.push(d));
    unterminated.push(Buffer.from('data: last without a blank line'));
    unterminated.end();
    assert.deepEqual(tail, ['last without a blank line']);
  });

  it('the openai target with --stream and the http target with --sse-path: the answer whole, usage from the last event, ttft in status and exports', async function () {
    this.timeout(30_000);
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 12, generationSeconds: 0, evaluationSeconds: 0, modelLatencyMs: 30 });
    try {
      const prompts = seedPrompts('benchmark', 12);
      const words = prompts.reduce((n, p) => n + wordCount(p.content), 0);
      const env = { EVAL_RUNNER_TOKEN: sandbox.token, OPENAI_API_KEY: 'unused' };
      const targets = [
        ['--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'sandbox-echo', '--stream'],
        ['--target', 'http', '--http-url', `${sandbox.baseUrl}/v1/chat/completions`, '--body-template', '{"stream": true, "messages": [{"role": "user", "content": "{{prompt}}"}]}',
          '--answer-path', 'choices.0.message.content', '--sse-path', 'choices.0.delta.content', '--usage-path', 'usage'],
      ];
      for (const target of targets) {
        const state = join(tempDir(), 'state');
        const service = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', state];
        const run = await cli(['run', ...service, ...target], env);
        assert.equal(run.code, 0, run.stderr);
        for (const p of prompts) assert.equal(sandbox.answerOf(1, p.traceId), p.content, `${target[1]}: ${p.traceId} whole`);
        const status = JSON.parse((await cli(['status', ...service, '--json'], env)).stdout) as {
          runs: Array<{ ttftMs?: { p50: number; p95: number }; tokens?: { prompt: number; completion: number }; latencyMs?: { p50: number } }>;
        };
        const r = status.runs[0]!;
        assert.ok(r.ttftMs && r.ttftMs.p50 >= 25 && r.ttftMs.p95 >= r.ttftMs.p50, `${target[1]}: ${JSON.stringify(r.ttftMs)}`);
        assert.ok(r.latencyMs!.p50 >= r.ttftMs.p50, 'the whole answer takes longer than its first token');
        assert.deepEqual(r.tokens, { prompt: words, completion: words });
        const text = (await cli(['status', ...service], env)).stdout;
        assert.match(text, /first token p50 \d+ ms · p95 \d+ ms/);
        const rows = (await cli(['export', ...service, '--format', 'jsonl'], env)).stdout.trim().split('\n').map((l) => JSON.parse(l) as { ttftMs: number | null });
        assert.ok(rows.every((row) => typeof row.ttftMs === 'number' && row.ttftMs >= 25));
      }
    } finally {
      await sandbox.close();
    }
  });

  it('--sse-path against an endpoint that answers JSON: a clear error naming what was expected', async function () {
    this.timeout(30_000);
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 3, generationSeconds: 0, evaluationSeconds: 0 });
    try {
      const run = await cli(
        ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', join(tempDir(), 's'), '--target', 'http',
          '--http-url', `${sandbox.baseUrl}/v1/chat/completions`, '--body-template', '{"messages": [{"role": "user", "content": "{{prompt}}"}]}',
          '--answer-path', 'choices.0.message.content', '--sse-path', 'choices.0.delta.content'],
        { EVAL_RUNNER_TOKEN: sandbox.token },
      );
      assert.equal(run.code, 1);
      assert.match(run.stdout, /did not answer with an event stream \(text\/event-stream\), which --sse-path expects/);
    } finally {
      await sandbox.close();
    }
  });
});
