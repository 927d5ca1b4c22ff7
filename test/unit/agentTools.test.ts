import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClient } from '../../src/api/client';
import { EvaluationSession, RunSteering } from '../../src/core';
import { listenForRun } from '../../src/protocol/runListener';
import { RUNNER_PROTOCOL_VERSION, writeRunnerFile } from '../../src/protocol/runnerFiles';
import { startSandbox } from '../../src/sandbox/server';
import { estimateRunOf } from '../../src/tools/runEstimate';
import { keyOf } from '../../src/tools/toolKit';
import { AGENT_TOOLS, callTool, inputJsonSchema, languageModelTools } from '../../src/tools/toolTable';
import type { ToolContext } from '../../src/tools/toolTable';
import { engineRun, scriptedTarget, tempDir } from './helpers/runs';

const ROOT = join(__dirname, '..', '..', '..');

// Issue 39: the one table under the MCP server and the editor's language-model tools.

type Schema = { type?: string; maximum?: number; maxLength?: number; maxItems?: number; enum?: unknown[]; items?: Schema; properties?: Record<string, Schema>; additionalProperties?: boolean };

/** The fields of a schema without a bound: a number without a maximum, a text without a length, a list without a size. */
function unbounded(schema: Schema, path: string): string[] {
  if (schema.type === 'object') return [...(schema.additionalProperties === false ? [] : [`${path}: takes other fields`]), ...Object.entries(schema.properties ?? {}).flatMap(([k, s]) => unbounded(s, `${path}.${k}`))];
  if (schema.type === 'array') return [...(schema.maxItems === undefined ? [`${path}: no maxItems`] : []), ...unbounded(schema.items ?? {}, `${path}[]`)];
  if ((schema.type === 'integer' || schema.type === 'number') && schema.maximum === undefined) return [`${path}: no maximum`];
  if (schema.type === 'string' && schema.enum === undefined && schema.maxLength === undefined) return [`${path}: no maxLength`];
  return [];
}

describe("the agents' tool table", () => {
  it('names the reads and the actions the issue asks for, each described and hinted', () => {
    assert.deepEqual(AGENT_TOOLS.map((t) => t.name), ['list_evaluations', 'get_run_status', 'estimate_run', 'list_traces', 'get_trace', 'compare_runs', 'start_run', 'pause_run', 'resume_run', 'cancel_run', 'rerun_traces']);
    for (const t of AGENT_TOOLS) {
      assert.ok(t.description.length > 100 && t.title, t.name);
      assert.equal(t.hints.readOnlyHint, AGENT_TOOLS.indexOf(t) < 6, `${t.name}: reads are read-only, actions not`);
    }
  });

  it('bounds every input: numbers, texts and lists have limits, and no other field is taken', () => {
    const problems = AGENT_TOOLS.flatMap((t) => unbounded(inputJsonSchema(t) as Schema, t.name));
    assert.deepEqual(problems, []);
  });

  it("acts on an evaluation at the service that lists it: a window's sandbox beside its settings' service", () => {
    const context: ToolContext = { stateDir: tempDir(), origin: 'https://evals.example.com', defaults: {}, runs: { why: 'none' }, originFor: (kind, id) => (kind === 'benchmark' && id === 7 ? 'sandbox' : undefined) };
    assert.equal(keyOf({ evaluationId: 7, kind: 'benchmark' }, context).origin, 'sandbox', 'the one service that lists it');
    assert.equal(keyOf({ evaluationId: 8, kind: 'benchmark' }, context).origin, 'https://evals.example.com', "else the host's");
    assert.equal(keyOf({ evaluationId: 7, kind: 'benchmark', origin: 'https://other.example.com/x' }, context).origin, 'https://other.example.com', 'an origin given wins');
  });

  it('tells a mistake in words naming the next step, and never throws', async () => {
    const context: ToolContext = { stateDir: tempDir(), origin: 'http://127.0.0.1:9', defaults: {}, runs: { why: 'The server has no target: add --target KIND.' } };
    const tool = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;
    assert.deepEqual(await callTool(tool('get_run_status'), {}, context), { isError: true, text: 'Name the evaluation: give evaluationId and kind (list_evaluations shows those in the state folder), or start the server with --evaluation and --kind.' });
    assert.deepEqual(await callTool(tool('start_run'), { evaluationId: 1, kind: 'benchmark' }, context), { isError: true, text: 'The server has no target: add --target KIND.' });
    assert.match((await callTool(tool('list_traces'), { evaluationId: 1, kind: 'benchmark', limit: 5000, state: 'lost' }, context)).text, /state must be one of "pending", .*; limit must be at most 200\./);
    assert.match((await callTool(tool('get_trace'), { evaluationId: -1, kind: 'benchmark', traceId: 'x', origin: 'file:///etc/passwd' }, context)).text, /evaluationId must be at least 0/);
    assert.match((await callTool(tool('get_trace'), { evaluationId: 1, kind: 'benchmark', traceId: 'x', origin: 'file:///etc/passwd' }, context)).text, /origin must be a service's origin/);
    assert.match((await callTool(tool('pause_run'), { evaluationId: 1, kind: 'benchmark' }, context)).text, /Could not reach the run of benchmark evaluation 1: no run of this evaluation is going on.*get_run_status/);
  });

  it("says a run is done once the journal records its end, while its runner lingers; a runner starting a run is not", async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 3, evaluationSeconds: 0 });
    try {
      const stateDir = tempDir();
      const { store } = await engineRun(sandbox, 'benchmark', stateDir, scriptedTarget((p) => `re: ${p}`));
      const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
      const context: ToolContext = { stateDir, origin: key.origin, defaults: { kind: 'benchmark', evaluationId: 1 }, runs: { why: 'no target' } };
      const status = async () => (await callTool(AGENT_TOOLS.find((t) => t.name === 'get_run_status')!, {}, context)) as unknown as { structured: { done: boolean } };
      // A live runner of ours (this process), as a runner is in the seconds after its run.
      const journal = new EvaluationSession(key, stateDir).journalFile;
      const runner = (startedAt: number) => writeRunnerFile(journal, { version: RUNNER_PROTOCOL_VERSION, pid: process.pid, socket: '/nowhere', secret: 'x', startedAt });
      runner(store.runs[0]!.startedAt - 10);
      assert.equal((await status()).structured.done, true, 'the run it started has ended');
      runner(store.runs[0]!.endedAt! + 10);
      assert.equal((await status()).structured.done, false, 'its run is not recorded yet: it is starting');
      // A run going on that is paused says so, and how to go on: it is asked over its socket, as pause_run reaches it.
      const steering = new RunSteering();
      const listener = (await listenForRun({ journalFile: journal, steering, label: 'paused', key, cancel: () => undefined }))!;
      try {
        const counts = { pending: 1, running: 0, answered: 0, submitted: 2, failed: 0, skipped: 0 };
        listener.progress({ phase: 'running', total: 3, counts, ratePerSecond: 0, etaSeconds: undefined, elapsedMs: 0, targetConcurrency: 2, lastError: undefined, paused: true });
        const paused = (await callTool(AGENT_TOOLS.find((t) => t.name === 'get_run_status')!, {}, context)) as unknown as { text: string; structured: { done: boolean; paused: boolean; concurrency: number } };
        assert.match(paused.text, /It is paused: resume_run resumes it/);
        assert.deepEqual([paused.structured.done, paused.structured.paused, paused.structured.concurrency], [false, true, 2]);
      } finally {
        listener.close();
      }
      runner(store.runs[0]!.endedAt! + 10);
      // An estimate would take the lock that runner's run is about to take: it says so instead.
      const estimate = estimateRunOf(new EvaluationSession(key, stateDir), {
        client: createApiClient({ baseUrl: sandbox.baseUrl, token: sandbox.token }),
        identity: { description: 'scripted', fingerprint: 'test:scripted', facts: { target: 'scripted' } },
        spec: { type: 'echo' },
        price: undefined,
        priceHint: '',
      });
      await assert.rejects(estimate, /A run of benchmark evaluation 1 is going on and holds its journal: no estimate until it ends/);
    } finally {
      await sandbox.close();
    }
  });
});

describe("the agents' tools' answers", () => {
  it('clear a secret a cut would split: a page never shows half of it', async () => {
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: 1, evaluationSeconds: 0 });
    try {
      const stateDir = tempDir();
      const secret = 'SECRET-KEY-0123456789';
      await engineRun(sandbox, 'benchmark', stateDir, scriptedTarget(() => `echo ${secret} done`));
      const key = { origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark' as const, evaluationId: 1 };
      const context: ToolContext = { stateDir, origin: key.origin, defaults: { kind: 'benchmark', evaluationId: 1 }, runs: { why: 'no target' }, secrets: () => Promise.resolve([secret]) };
      const session = new EvaluationSession(key, stateDir);
      await session.status();
      const [traceId] = session.store.traces.keys();
      const page = async (offset: number) => ((await callTool(AGENT_TOOLS.find((t) => t.name === 'get_trace')!, { traceId, offset, maxChars: 12 }, context)) as unknown as { structured: { answer: { text: string } } }).structured.answer.text;
      const pages = [await page(0), await page(12), await page(24)].join('');
      assert.ok(!pages.includes('SECRET-') && !pages.includes('0123456789'), `no half of the secret: ${pages}`);
      assert.match(pages, /\[redacted\]/);
    } finally {
      await sandbox.close();
    }
  });
});

describe("the agents' tools as the editor's language-model tools", () => {
  it('names each evalRunner_<tool>, gives the reads a reference name, and keeps the input schema of the table', () => {
    const tools = languageModelTools();
    assert.deepEqual(tools.map((t) => t.name), AGENT_TOOLS.map((t) => `evalRunner_${t.name}`));
    assert.deepEqual(tools.filter((t) => t.toolReferenceName).map((t) => t.name), AGENT_TOOLS.filter((t) => t.hints.readOnlyHint).map((t) => `evalRunner_${t.name}`));
    for (const [i, t] of tools.entries()) assert.deepEqual(t.inputSchema, inputJsonSchema(AGENT_TOOLS[i]!));
  });

  it('are contributed in package.json exactly as derived from the table', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: { languageModelTools?: unknown } };
    // Regenerate after changing a tool: contributes.languageModelTools = languageModelTools() (out/src/tools/toolTable.js).
    assert.deepEqual(pkg.contributes.languageModelTools, languageModelTools());
  });

  it('leave the table out of dist/extension.js: dist/agentToolCalls.js has it, loaded on the first call', () => {
    const dist = join(ROOT, 'dist');
    const extension = readFileSync(join(dist, 'extension.js'), 'utf8');
    assert.ok(extension.includes('"./agentToolCalls.js"') && !extension.includes('list_evaluations'));
    assert.ok(readFileSync(join(dist, 'agentToolCalls.js'), 'utf8').includes('list_evaluations'));
    assert.ok(readFileSync(join(ROOT, '.vscodeignore'), 'utf8').includes('!dist/agentToolCalls.js'), 'and the VSIX carries it');
  });
});
