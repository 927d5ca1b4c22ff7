import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DEBUG_ID_KEY, debugLaunch, debugShimPath, debuggable, parseDebugAnswer, readDebugAnswer, removeDebugFiles, writeDebugRequest } from '../../src/core/targets/python/debugLaunch';
import type { DebugFiles } from '../../src/core/targets/python/debugLaunch';
import { defaultPython } from '../../src/core/targets/python/pythonTarget';
import { webviewMessageSchema } from '../../src/webview/messageSchemas';
import { tempDir } from './helpers/runs';

const PROMPT = 'What is the secret plan? sk-prompt-only-in-the-file';
const REQUEST = { prompt: PROMPT, traceId: 'trace-7', evaluationId: 3, kind: 'benchmark' };

describe('Debug Trace: the launch configuration and the answer read back', () => {
  const made: DebugFiles[] = [];
  const files = (batch = false) => {
    const f = writeDebugRequest(REQUEST, batch, tempDir());
    made.push(f);
    return f;
  };
  after(() => made.forEach(removeDebugFiles));

  it('debugs only the user\'s own code: a python function or a worker', () => {
    assert.deepEqual(['echo', 'openai', 'http', 'command', 'vscode-lm', 'manual', 'python', 'worker'].filter((type) => debuggable({ type })), ['python', 'worker']);
  });

  it('Python: a debugpy launch of the debug shim, the prompt in a private file, justMyCode, no secret in its environment', () => {
    const f = files();
    const shim = debugShimPath('python');
    const { kind, configuration: c } = debugLaunch({
      spec: { type: 'python', file: '/work/app/model.py', function: 'reply', python: '/opt/venv/bin/python' },
      files: f,
      cwd: '/work/app',
      traceId: 'trace-7',
      id: 'abc',
      envNames: ['PATH', 'EVAL_RUNNER_TOKEN', 'HOME'],
      shim,
    });
    assert.equal(kind, 'python');
    assert.equal(c.type, 'debugpy');
    assert.equal(c.request, 'launch');
    assert.equal(c.program, shim);
    assert.equal(basename(shim), 'evalRunnerDebug.py');
    assert.deepEqual(c.args, [f.request, f.answer, '/work/app/model.py', 'reply']);
    assert.equal(c.python, '/opt/venv/bin/python');
    assert.equal(c.cwd, '/work/app');
    assert.equal(c.justMyCode, true);
    assert.equal(c.console, 'internalConsole');
    assert.equal(c[DEBUG_ID_KEY], 'abc');
    // The withheld variable the editor has is removed (null, for debugpy's launcher); one it has not is not named.
    assert.deepEqual(c.env, { PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1', EVAL_RUNNER_TOKEN: null });
    // Stepping out of the user's function does not land in Eval Runner's frames.
    assert.deepEqual(c.rules, [{ path: shim, include: false }, { path: join(shim, '..', 'evalRunnerShim.py'), include: false }]);
    assert.ok(!JSON.stringify(c).includes('sk-prompt'), 'the prompt is not in the configuration (argv, env)');
    assert.deepEqual(JSON.parse(readFileSync(f.request, 'utf8')), { id: 1, prompt: PROMPT, traceId: 'trace-7', evaluationId: 3, kind: 'benchmark' });
    if (process.platform !== 'win32') {
      assert.equal(statSync(f.dir).mode & 0o777, 0o700, 'the folder is private');
      assert.equal(statSync(f.request).mode & 0o777, 0o600, 'the request file is private');
    }
  });

  it('Python: the default function and interpreter are the run\'s; a bad function name is refused', () => {
    const f = files();
    const base = { files: f, cwd: undefined, traceId: 't', id: 'x', envNames: [], shim: '/s/evalRunnerDebug.py' };
    const { configuration: c } = debugLaunch({ ...base, spec: { type: 'python', file: '/m.py' } });
    assert.deepEqual(c.args, [f.request, f.answer, '/m.py', 'answer']);
    assert.equal(c.python, defaultPython());
    assert.equal('cwd' in c, false);
    assert.throws(() => debugLaunch({ ...base, spec: { type: 'python', file: '/m.py', function: 'os.system' } }), /not a Python function name/);
  });

  it('a worker: a launch of the Node debug shim under the JavaScript debugger, following the worker it starts', () => {
    const f = files();
    const shim = debugShimPath('node');
    const { kind, configuration: c } = debugLaunch({
      spec: { type: 'worker', command: 'node "my worker.js" --fast' },
      files: f,
      cwd: '/work/app',
      traceId: 'trace-7',
      id: 'abc',
      envNames: ['OPENAI_API_KEY', 'EVAL_RUNNER_TOKEN'],
      shim,
    });
    assert.equal(kind, 'node');
    assert.equal(c.type, 'node');
    assert.equal(c.request, 'launch');
    assert.equal(c.program, shim);
    assert.deepEqual(c.args, [f.request, f.answer, 'node', 'my worker.js', '--fast']);
    assert.equal(c.cwd, '/work/app');
    assert.equal(c.autoAttachChildProcesses, true);
    assert.deepEqual(c.skipFiles, ['<node_internals>/**', shim]);
    // js-debug removes a variable set to null from the environment it passes on.
    assert.deepEqual(c.env, { EVAL_RUNNER_TOKEN: null, OPENAI_API_KEY: null });
    assert.ok(!JSON.stringify(c).includes('sk-prompt'));
    assert.throws(() => debugLaunch({ spec: { type: 'worker', command: '  ' }, files: f, cwd: undefined, traceId: 't', id: 'x', envNames: [], shim }), /empty/);
  });

  it('Python: the debug shim calls the function as a run does and writes its answer (run without a debugger here)', () => {
    const python = defaultPython();
    const dir = tempDir();
    const model = join(dir, 'model.py');
    writeFileSync(model, 'def answer(prompt, context):\n    return {"answer": context["traceId"] + ": " + prompt[:8], "usage": {"prompt_tokens": 3}}\n\ndef broken(prompt):\n    return helper(prompt)\n\ndef helper(p):\n    raise ValueError("no " + p[:4])\n\ndef many(prompts, contexts):\n    return [p.upper()[:4] for p in prompts]\n');
    const run = (fn: string, batch = false) => {
      const f = files(batch);
      const { configuration: c } = debugLaunch({ spec: { type: 'python', file: model, function: fn }, files: f, cwd: dir, traceId: 't', id: 'x', envNames: [], shim: debugShimPath('python') });
      spawnSync(python, [c.program as string, ...(c.args as string[])], { cwd: dir, stdio: 'pipe' });
      return readDebugAnswer(f);
    };
    assert.deepEqual(run('answer'), { answer: 'trace-7: What is ', usage: { promptTokens: 3 } });
    const failed = run('broken');
    assert.ok(failed && 'error' in failed, JSON.stringify(failed));
    assert.equal(failed.error, 'ValueError: no What');
    assert.match(failed.traceback ?? '', /model\.py", line 8, in helper/);
    assert.doesNotMatch(failed.traceback ?? '', /evalRunner/, "the shims' frames are not the user's");
    assert.deepEqual(run('many', true), { answer: 'WHAT' }, 'a batch function gets a batch of one');
    assert.deepEqual(run('missing'), { fatal: "AttributeError: model.py has no function 'missing'" });
  });

  it('a worker: the Node debug shim feeds the one request over the worker protocol and writes the reply', () => {
    const dir = tempDir();
    const worker = join(dir, 'worker.js');
    writeFileSync(
      worker,
      `const rl = require('node:readline').createInterface({ input: process.stdin });
console.log(JSON.stringify({ ready: true }));
console.log('a print of the worker');
rl.on('line', (l) => { const r = JSON.parse(l); if (r.prompt.startsWith('die')) process.exit(4); console.log(JSON.stringify({ id: r.id, answer: r.traceId + ' ' + r.prompt.length })); });
`,
    );
    const run = (request = REQUEST) => {
      const f = writeDebugRequest(request, false, tempDir());
      made.push(f);
      const { configuration: c } = debugLaunch({ spec: { type: 'worker', command: `${JSON.stringify(process.execPath)} worker.js` }, files: f, cwd: dir, traceId: 't', id: 'x', envNames: [], shim: debugShimPath('node') });
      const out = execFileSync(process.execPath, [c.program as string, ...(c.args as string[])], { cwd: dir, encoding: 'utf8' });
      return { out, answer: readDebugAnswer(f) };
    };
    const ok = run();
    assert.deepEqual(ok.answer, { answer: `trace-7 ${PROMPT.length}` });
    assert.equal(ok.out, 'a print of the worker\n', 'what is not its reply shows in the debug console');
    assert.deepEqual(run({ ...REQUEST, prompt: 'die now' }).answer, { error: 'The worker exited with code 4 before it answered.' });
  });

  it('a worker: stopping the Node debug shim (the debugger\'s Stop) ends the worker it started', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'worker.pid');
    // A worker that never answers: the user sits at a breakpoint, then presses Stop.
    writeFileSync(join(dir, 'worker.js'), `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);\n`);
    const f = files();
    const { configuration: c } = debugLaunch({ spec: { type: 'worker', command: `${JSON.stringify(process.execPath)} worker.js` }, files: f, cwd: dir, traceId: 't', id: 'x', envNames: [], shim: debugShimPath('node') });
    const shim = spawn(process.execPath, [c.program as string, ...(c.args as string[])], { cwd: dir, stdio: 'ignore' });
    const started = Date.now();
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') {
      if (Date.now() - started > 20_000) assert.fail('the worker did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    const worker = Number(readFileSync(pidFile, 'utf8'));
    shim.kill('SIGTERM');
    await new Promise((r) => shim.once('exit', r));
    const alive = () => {
      try {
        process.kill(worker, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(), false, 'the worker ended with the shim');
  });

  it("Run Details' row action is checked on the host: a trace id, nothing else", () => {
    assert.deepEqual(webviewMessageSchema.parse({ type: 'debug', traceId: 'trace-7' }), { type: 'debug', traceId: 'trace-7' });
    for (const bad of [{ type: 'debug' }, { type: 'debug', traceId: 7 }, { type: 'debug', traceId: 'x'.repeat(100_001) }]) {
      assert.equal(webviewMessageSchema.safeParse(bad).success, false, JSON.stringify(bad).slice(0, 60));
    }
  });

  it('reads a reply as the worker protocol says, and says what is wrong with one that is not', () => {
    assert.deepEqual(parseDebugAnswer('{"id":1,"answer":"hi","usage":{"completionTokens":2}}'), { answer: 'hi', usage: { completionTokens: 2 } });
    assert.deepEqual(parseDebugAnswer('{"id":1,"error":"KeyError: x","traceback":"tb"}'), { error: 'KeyError: x', traceback: 'tb' });
    assert.deepEqual(parseDebugAnswer('{"fatal":"SyntaxError"}'), { fatal: 'SyntaxError' });
    assert.deepEqual(parseDebugAnswer('{"id":1,"answers":[{"answer":"a"},{"answer":"b"}]}'), { error: 'The batch function returned 2 answers for one prompt.' });
    assert.match((parseDebugAnswer('not json \u001b[31m') as { error: string }).error, /not the worker protocol: "not json  \[31m"/);
    assert.match((parseDebugAnswer('{"id":1,"answer":5}') as { error: string }).error, /no "answer" string/);
    assert.equal(readDebugAnswer({ dir: '/nonexistent', request: '/nonexistent/r', answer: '/nonexistent/a' }), undefined, 'no file: the session ended first');
  });
});
