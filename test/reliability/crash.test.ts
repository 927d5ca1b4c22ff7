import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { journalPath, parseJournal } from '../../src/core/journal/journal';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from '../unit/helpers/cli';
import { tempDir } from '../unit/helpers/runs';

describe('crash: SIGKILL at 20 random moments of a 5,000-trace run', function () {
  this.timeout(240_000);

  it('loses nothing: every trace accepted, no journaled answer recomputed, double submissions bounded', async () => {
    const traces = 5000;
    const concurrency = 16;
    const kills = 20;
    // The sandbox counts submissions and, as the target (its OpenAI-compatible echo model), calls per prompt.
    const sandbox = await startSandbox({ port: 0, benchmarkTraces: traces, evaluationSeconds: 0, modelLatencyMs: 2 });
    const stateDir = tempDir();
    const path = journalPath(stateDir, { origin: sandbox.baseUrl, kind: 'benchmark', evaluationId: 1 });
    const args = ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--target', 'openai',
      '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'echo', '--concurrency', String(concurrency), '--state-dir', stateDir];
    const env = { EVAL_RUNNER_TOKEN: sandbox.token, OPENAI_API_KEY: 'sk-never-logged' };
    const moments: string[] = [];
    try {
      let killed = 0;
      // Calls per prompt when each kill's journal was read: those answers must never be asked for again.
      const frozen = new Map<string, number>();
      for (let i = 0; i < kills; i++) {
        // Most kills land after 20–200 more accepted submissions (mid-run, answers and submissions in flight);
        // every fifth lands 0–400 ms after start (start-up, journal replay, listing).
        const early = i % 5 === 4;
        const after = 20 + Math.floor(Math.random() * 180);
        const delayMs = Math.floor(Math.random() * 400);
        const base = sandbox.stats.submissions;
        const r = await cli(args, env, (child) => {
          const poll = setInterval(() => {
            if (!early && sandbox.stats.submissions - base >= after) child.kill('SIGKILL');
          }, 2);
          const timer = early ? setTimeout(() => child.kill('SIGKILL'), delayMs) : undefined;
          child.on('exit', () => {
            clearInterval(poll);
            clearTimeout(timer);
          });
        });
        if (r.signal !== 'SIGKILL') assert.fail(`run ${i + 1} ended before its kill (${r.code}): ${r.stderr.slice(-500)}`);
        killed++;
        moments.push(early ? `${delayMs} ms` : `+${sandbox.stats.submissions - base}`);
        const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
        const { records, corruptLines } = parseJournal(text);
        assert.equal(corruptLines, 0, 'a SIGKILL can tear the last line only');
        // The journal holds the prompt list; each journaled answer's prompt is frozen at its calls so far.
        const promptOf = new Map<string, string>();
        for (const rec of records) {
          if (rec.t === 'prompts') for (const item of rec.items) promptOf.set(item.traceId, item.content);
          if (rec.t === 'item') promptOf.set(rec.id, rec.p);
          const prompt = rec.t === 'answer' ? rec.p ?? promptOf.get(rec.id) : undefined;
          if (prompt !== undefined) frozen.set(prompt, sandbox.stats.modelCallsByPrompt.get(prompt) ?? 0);
        }
      }
      assert.equal(killed, kills);
      assert.ok(frozen.size > 0, 'journaled answers were found, so the check below checks something');
      const final = await cli(args, env);
      assert.equal(final.code, 0, final.stdout + final.stderr);
      const summary = sandbox.summary(1)!;
      assert.equal(summary.counts.Responded + summary.counts.Evaluated, traces, 'every trace accepted');
      let recomputed = 0;
      for (const [prompt, calls] of frozen) if (sandbox.stats.modelCallsByPrompt.get(prompt) !== calls) recomputed++;
      assert.equal(recomputed, 0, 'a journaled answer is never sent to the target again');
      assert.equal(sandbox.stats.modelCallsByPrompt.size, traces, 'every prompt reached the target');
      // The in-flight window: `concurrency` target calls or submissions under way, plus at most `concurrency`
      // records not yet fsync'd (the engine waits for the disk beyond that). Only those can be repeated.
      const window = 2 * concurrency;
      const extraCalls = sandbox.stats.modelCalls - traces;
      assert.ok(extraCalls <= killed * window, `extra target calls ${extraCalls} ≤ ${killed} kills × ${window}`);
      const doubles = sandbox.stats.submissions - traces;
      assert.ok(doubles <= killed * window, `double submissions ${doubles} ≤ ${killed} kills × ${window}`);
      const { records } = parseJournal(readFileSync(path, 'utf8'));
      const submitted = new Set(records.filter((r) => r.t === 'submitted').map((r) => (r as { id: string }).id));
      assert.equal(submitted.size, traces, 'the journal records every acceptance');
      assert.ok(!readFileSync(path, 'utf8').includes('sk-never-logged'));
      console.log(`      kills at: ${moments.join(', ')}; extra target calls ${extraCalls}, double submissions ${doubles}`);
    } finally {
      await sandbox.close();
    }
  });
});
