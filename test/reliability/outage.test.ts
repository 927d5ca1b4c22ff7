import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { seedPrompts } from '../../src/sandbox/seed';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import type { SandboxOptions } from '../../src/sandbox/options';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

interface StatusJson {
  counts: { submitted: number; failed: number; answered: number };
  alreadyAtService: number;
  runs: Array<{ runId: string; holds?: Array<{ kind: string; cause: string }> }>;
}

const SUBMIT_PATH = '/api/evaluation/response';

/** A gateway's own error page, as nginx sends it while the service behind it redeploys. */
function gatewayPage(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'text/html' });
  res.end(`<html><head><title>${status} Bad Gateway</title></head><body><center><h1>${status} Bad Gateway</h1></center><hr><center>nginx</center></body></html>`);
}

/** Runs the built CLI against a sandbox whose submissions the test may break; the target is the sandbox's echo model. */
async function setUp(traces: number, intercept: (req: IncomingMessage, res: ServerResponse, sandbox: Sandbox) => boolean, extra: Partial<SandboxOptions> = {}) {
  const started: { sandbox?: Sandbox } = {};
  const sandbox = await startSandbox({
    port: 0,
    benchmarkTraces: traces,
    evaluationSeconds: 0,
    modelLatencyMs: 15,
    ...extra,
    intercept: (req, res) => req.method === 'POST' && req.url?.startsWith(SUBMIT_PATH) === true && intercept(req, res, started.sandbox!),
  });
  started.sandbox = sandbox;
  const stateDir = tempDir();
  const svc = ['--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir];
  const run = [...svc, '--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'echo', '--concurrency', '4'];
  const env = { EVAL_RUNNER_TOKEN: sandbox.token, OPENAI_API_KEY: 'sk-test-never-logged' };
  const status = async () => JSON.parse((await cli(['status', ...svc, '--json'], env)).stdout) as StatusJson;
  const modelCallsPerPrompt = () => seedPrompts('benchmark', traces).map((p) => sandbox.stats.modelCallsByPrompt.get(p.content) ?? 0);
  return { sandbox, run, env, status, modelCallsPerPrompt };
}

describe('runs that ride out the service: an outage, a lost reply, a patience that runs out (CLI)', function () {
  this.timeout(120_000);
  let sandbox: Sandbox | undefined;
  afterEach(() => sandbox?.close());

  it('a service that answers 502 for 30 s and then drops connections for 5 s mid-run: one run, each answer submitted once, the model asked once per trace, exit 0', async () => {
    const TRACES = 120;
    let downFrom: number | undefined;
    const t = await setUp(TRACES, (req, res, box) => {
      if (downFrom === undefined && box.stats.submissions >= 20) downFrom = Date.now();
      const down = downFrom === undefined ? undefined : Date.now() - downFrom;
      if (down === undefined || down >= 35_000) return false;
      if (down < 30_000) gatewayPage(res, 502);
      else req.socket.destroy();
      return true;
    });
    sandbox = t.sandbox;
    const r = await cli(['run', ...t.run], t.env);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    assert.ok(downFrom !== undefined, 'the outage happened mid-run');
    assert.match(r.stdout, /service unavailable \d\d:\d\d:\d\d–\d\d:\d\d:\d\d \(HTTP 502 Bad Gateway\)/);
    const s = await t.status();
    assert.equal(s.counts.submitted, TRACES);
    assert.equal(s.counts.failed, 0, 'an outage fails no trace');
    assert.equal(s.runs.length, 1);
    for (const p of seedPrompts('benchmark', TRACES)) assert.equal(t.sandbox.submissionsOf(1, p.traceId), 1, `${p.traceId} submitted once`);
    assert.deepEqual([...new Set(t.modelCallsPerPrompt())], [1], 'the model was asked once per trace');
  });

  it('a reply lost after the service recorded the answer, then 409 on the retry: submitted, "already at the service", exit 0, never sent again', async () => {
    const TRACES = 20;
    let lost = false;
    const t = await setUp(
      TRACES,
      (_req, res) => {
        if (lost) return false;
        lost = true;
        // The service records the answer; the connection closes before its reply.
        res.end = (() => {
          res.socket?.destroy();
          return res;
        }) as typeof res.end;
        return false;
      },
      { rejectRepeats: true },
    );
    sandbox = t.sandbox;
    const r = await cli(['run', ...t.run], t.env);
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const s = await t.status();
    assert.equal(s.counts.submitted, TRACES);
    assert.equal(s.counts.failed, 0);
    assert.equal(s.alreadyAtService, 1);
    const text = await cli(['status', ...t.run.slice(0, 8)], t.env);
    assert.match(text.stdout, /Already there +1/);
    const exported = (await cli(['export', ...t.run.slice(0, 8), '--format', 'jsonl'], t.env)).stdout.trim().split('\n').map((l) => JSON.parse(l) as { alreadyAtService: boolean });
    assert.equal(exported.filter((row) => row.alreadyAtService).length, 1);
    const before = t.sandbox.stats.requests.get(`POST ${SUBMIT_PATH}`);
    assert.equal((await cli(['run', ...t.run], t.env)).code, 0);
    assert.equal(t.sandbox.stats.requests.get(`POST ${SUBMIT_PATH}`), before, 'nothing is sent again');
  });

  it('a patience of 5 s against a service that stays down: exit 4 within the patience and a probe, nothing failed, the answers wait; a rerun finishes without the model', async () => {
    const TRACES = 40;
    let phase: 'up' | 'down' | 'back' = 'up';
    let downAt = 0;
    const t = await setUp(TRACES, (_req, res, box) => {
      if (phase === 'up' && box.stats.submissions >= 5) {
        phase = 'down';
        downAt = Date.now();
      }
      if (phase !== 'down') return false;
      gatewayPage(res, 503);
      return true;
    });
    sandbox = t.sandbox;
    const r = await cli(['run', ...t.run, '--service-patience', '5'], t.env);
    const ended = Date.now();
    assert.equal(r.code, 4, r.stderr.slice(-2000));
    assert.ok(ended - downAt < 5_000 + 10_000 + 5_000, `stopped ${ended - downAt} ms after the outage began`);
    // Why it stopped, on stderr; the outage it stopped in, in the figures and in the run's history.
    assert.match(r.stderr, /eval-runner run: .*unavailable since .*longer than the patience of 5 s/);
    assert.match(r.stderr, /\d+ answer\(s\) are journaled and waiting/);
    assert.match(r.stdout, /service unavailable \d\d:\d\d:\d\d–\d\d:\d\d:\d\d \(HTTP 503.*still so when the run stopped\)/);
    const s = await t.status();
    assert.deepEqual(s.runs[0]!.holds?.map((h) => h.kind), ['outage']);
    assert.equal(s.counts.failed, 0, 'nothing failed');
    assert.ok(s.counts.answered > 0, 'answers wait in the journal');
    const callsBefore = t.modelCallsPerPrompt().reduce((a, b) => a + b, 0);
    phase = 'back';
    const again = await cli(['run', ...t.run], t.env);
    assert.equal(again.code, 0, again.stderr.slice(-2000));
    assert.equal((await t.status()).counts.submitted, TRACES);
    const asked = t.modelCallsPerPrompt().reduce((a, b) => a + b, 0) - callsBefore;
    assert.equal(asked, TRACES - s.counts.answered - s.counts.submitted, 'journaled answers are not asked for again');
  });
});
