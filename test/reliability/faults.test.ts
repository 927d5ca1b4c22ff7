import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createApiClient } from '../../src/api/client';
import type { RetryEvent } from '../../src/api/client';
import { runEvaluation } from '../../src/core/run/engine';
import { journalPath, openJournal, readJournal } from '../../src/core/journal/journal';
import { TraceStore } from '../../src/core/store/traceStore';
import { startSandbox } from '../../src/sandbox/server';
import { scriptedTarget, tempDir } from '../unit/helpers/runs';

type Fault = 'html503' | 'drop' | 'burst429' | 'slow';

/**
 * Faults injected in front of the real sandbox. POSTs: 10 % 503 with an HTML body, 5 % dropped connections,
 * 5 % slow replies (0.3–1.5 s), and every 2 s a 250 ms burst of 429s with Retry-After. The list request meets
 * one of each in turn (it has 4 attempts), so both kinds of request go through every fault.
 */
function faultInjector(counts: Map<Fault, number>) {
  const started = Date.now();
  const listPlan: Array<Fault | undefined> = ['html503', 'drop', 'burst429', 'slow'];
  let lists = 0;
  const count = (f: Fault) => counts.set(f, (counts.get(f) ?? 0) + 1);
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (!req.url?.startsWith('/api/')) return false;
    let fault: Fault | undefined;
    if (req.method === 'GET') fault = listPlan[lists++];
    else if ((Date.now() - started) % 2000 < 250) fault = 'burst429';
    else {
      const roll = Math.random();
      fault = roll < 0.1 ? 'html503' : roll < 0.15 ? 'drop' : roll < 0.2 ? 'slow' : undefined;
    }
    if (!fault) return false;
    count(fault);
    switch (fault) {
      case 'html503':
        res.writeHead(503, { 'content-type': 'text/html' });
        res.end('<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503</h1></center><hr>nginx</body></html>');
        return true;
      case 'drop':
        req.socket.destroy();
        return true;
      case 'burst429':
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ code: 'req_429', message: 'Too many requests', data: null, success: false }));
        return true;
      case 'slow':
        await new Promise((r) => setTimeout(r, 300 + Math.random() * 1200));
        return false;
    }
  };
}

describe('faults: 503 HTML pages, dropped connections, 429 bursts, slow replies', function () {
  this.timeout(180_000);

  it('completes in one run with default retries, every answer accepted exactly as given, the target called once per trace', async () => {
    const traces = 2000;
    const counts = new Map<Fault, number>();
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: traces, evaluationSeconds: 0, intercept: faultInjector(counts) });
    const stateDir = tempDir();
    const retries: RetryEvent[] = [];
    const client = createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, onRetry: (e) => retries.push(e) });
    const path = journalPath(stateDir, { origin: client.origin, kind: 'benchmark', evaluationId: 1 });
    const { journal, replay } = await openJournal(path);
    const store = TraceStore.fromRecords(replay.records);
    const target = scriptedTarget((prompt) => `answer to ${prompt}`);
    try {
      const summary = await runEvaluation({ client, kind: 'benchmark', evaluationId: 1, target, journal, store, concurrency: 32 });
      assert.equal(summary.outcome, 'completed', `${summary.message}; failed: ${JSON.stringify(summary.failed.slice(0, 3))}`);
      assert.equal(summary.counts.submitted, traces);
      const evaluation = sandbox.summary(1)!;
      assert.equal(evaluation.counts.Responded + evaluation.counts.Evaluated, traces, 'every trace accepted');
      for (let i = 0; i < traces; i += 97) {
        const trace = [...store.traces.values()][i]!;
        assert.equal(sandbox.answerOf(1, trace.traceId), `answer to ${trace.prompt}`, 'the accepted answer is the one the target gave');
      }
      assert.equal(target.total(), traces, 'the target was called once per trace');
      for (const f of ['html503', 'drop', 'burst429', 'slow'] as const) assert.ok((counts.get(f) ?? 0) > 0, `${f} was injected`);
      const reasons = new Set(retries.map((r) => r.error.reason));
      for (const reason of ['server', 'network', 'rateLimited']) assert.ok(reasons.has(reason as never), `retried after ${reason}`);
      const honoured = retries.filter((r) => r.error.reason === 'rateLimited');
      assert.ok(honoured.every((r) => r.delayMs === 1000), 'every 429 retry waited the Retry-After');
      console.log(`      injected ${JSON.stringify(Object.fromEntries(counts))}; ${retries.length} retries; ${summary.durationMs} ms`);
    } finally {
      await journal.close();
      await client.close();
      await sandbox.close();
    }
    const reread = await readJournal(path);
    assert.equal(reread.corruptLines, 0);
    assert.equal(reread.records.filter((r) => r.t === 'answer').length, traces, 'one journaled answer per trace');
  });
});
