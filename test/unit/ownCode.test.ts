import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configToArgs, parseRunConfig } from '../../src/core/options/runConfig';
import { parseIdsFile, previousRun, selectTraces } from '../../src/core/run/rerun';
import { shellInvocation, splitCommandLine, treeSpawnOptions } from '../../src/core/targets/processes';
import { targetIdentity } from '../../src/core/targets/targetSpec';
import { TraceStore } from '../../src/core/store/traceStore';
import { EvaluationSession } from '../../src/core/session/session';
import { startSandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

describe('your own code as the target: the logic that decides', () => {
  it('splits a worker command line without a shell, on POSIX and on Windows', () => {
    assert.deepEqual(splitCommandLine(`node "my worker.js" --flag 'a b' c\\ d`, 'linux'), ['node', 'my worker.js', '--flag', 'a b', 'c d']);
    assert.deepEqual(splitCommandLine(`"C:\\Program Files\\Python\\python.exe" C:\\work\\w.py`, 'win32'), ['C:\\Program Files\\Python\\python.exe', 'C:\\work\\w.py']);
    assert.deepEqual(splitCommandLine('  ', 'linux'), []);
    assert.throws(() => splitCommandLine('node "unclosed', 'linux'), /unclosed " quote/);
  });

  it('runs a command through the platform\'s shell: /bin/sh on POSIX, %ComSpec% on Windows', () => {
    assert.deepEqual(shellInvocation('echo hi', 'linux', {}), { file: '/bin/sh', args: ['-c', 'echo hi'], verbatim: false });
    assert.deepEqual(shellInvocation('echo hi', 'win32', { ComSpec: 'C:\\Windows\\system32\\cmd.exe' }), {
      file: 'C:\\Windows\\system32\\cmd.exe',
      args: ['/d', '/s', '/c', '"echo hi"'],
      verbatim: true,
    });
    assert.equal(shellInvocation('x', 'win32', {}).file, 'cmd.exe');
    // POSIX: a process group of its own (killed as a group); Windows: taskkill /T walks the tree, no console window.
    assert.deepEqual(treeSpawnOptions('linux'), { detached: true, windowsHide: true });
    assert.deepEqual(treeSpawnOptions('win32'), { detached: false, windowsHide: true });
  });

  it('a python target\'s identity holds the file, function, interpreter and a hash of the content: an edit is another target', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'model.py'), 'def answer(p):\n    return p\n');
    const spec = { type: 'python' as const, file: 'model.py' };
    const first = targetIdentity(spec, dir);
    assert.match(first.description, /^python: model\.py:answer @ [0-9a-f]{6}$/);
    assert.deepEqual(targetIdentity(spec, dir), first, 'stable while the file is unchanged');
    writeFileSync(join(dir, 'model.py'), 'def answer(p):\n    return p.upper()\n');
    const edited = targetIdentity(spec, dir);
    assert.notEqual(edited.fingerprint, first.fingerprint);
    assert.notEqual(edited.description, first.description);
    assert.notEqual(targetIdentity({ ...spec, function: 'other' }, dir).fingerprint, edited.fingerprint);
    assert.notEqual(targetIdentity({ ...spec, python: '/opt/py/bin/python' }, dir).fingerprint, edited.fingerprint);
  });

  it('chooses the traces to rerun: failed, marked bad, noted, or the ids of a file', () => {
    const store = TraceStore.fromRecords([
      { t: 'prompts', at: 1, items: ['a', 'b', 'c', 'd'].map((id) => ({ traceId: id, content: `p ${id}` })) },
      { t: 'run', at: 2, run: 'r1', fp: 'x', target: 'x' },
      { t: 'answer', id: 'a', a: 'A', at: 3, run: 'r1' },
      { t: 'answer', id: 'b', a: 'B', at: 3, run: 'r1' },
      { t: 'failed', id: 'c', reason: 'boom', stage: 'target', at: 4 },
      { t: 'verdict', id: 'a', at: 5, rating: 'bad' },
      { t: 'verdict', id: 'b', at: 5, note: 'too long' },
    ]);
    assert.deepEqual(selectTraces(store, 'failed').ids, ['c']);
    assert.deepEqual(selectTraces(store, 'bad').ids, ['a']);
    assert.deepEqual(selectTraces(store, 'noted').ids, ['b']);
    assert.deepEqual(selectTraces(store, { ids: parseIdsFile('d\r\n\nzz\na\n') }), { ids: ['a', 'd'], unknown: 1 });
    assert.equal(previousRun(store, ['a', 'b']), 'r1');
  });

  it('--config takes the python and worker targets with the settings\' keys', () => {
    const py = parseRunConfig({ target: { type: 'python', file: 'model.py', function: 'reply', python: 'python3.12', workers: 3 } }, 'c.json');
    assert.deepEqual(configToArgs(py, [], 'run'), ['--target', 'python', '--python-file', 'model.py', '--python-function', 'reply', '--python', 'python3.12', '--workers', '3']);
    const worker = parseRunConfig({ target: { type: 'worker', command: 'node worker.js' } }, 'c.json');
    assert.deepEqual(configToArgs(worker, [], 'run'), ['--target', 'worker', '--worker-command', 'node worker.js']);
  });

  it('the CLI: a python target, then --only bad reruns the answers marked bad as a new run; an import error exits 2', async function () {
    this.timeout(30_000);
    const sandbox = await startSandbox({ port: 0, generationSeconds: 0, evaluationSeconds: 0 });
    try {
      const dir = tempDir();
      writeFileSync(join(dir, 'model.py'), 'def answer(prompt, context):\n    return "v1 " + context["traceId"]\n');
      const state = join(dir, 'state');
      const base = ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', state, '--target', 'python', '--python-file', join(dir, 'model.py')];
      const env = { EVAL_RUNNER_TOKEN: sandbox.token };
      const first = await cli(base, env);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(sandbox.answerOf(1, 'bench-0003'), 'v1 bench-0003');
      // Nothing marked bad yet: nothing to rerun.
      const none = await cli([...base, '--only', 'bad'], env);
      assert.equal(none.code, 0);
      assert.match(none.stderr, /No trace is marked bad: nothing to rerun/);
      // Mark two bad in the journal, as the editor does, then edit the function.
      const store = new EvaluationSession({ origin: new URL(sandbox.baseUrl).origin, kind: 'benchmark', evaluationId: 1 }, state);
      await store.setVerdict('bench-0003', 'bad', undefined);
      await store.setVerdict('bench-0005', 'bad', 'wrong');
      writeFileSync(join(dir, 'model.py'), 'def answer(prompt, context):\n    return "v2 " + context["traceId"]\n');
      const rerun = await cli([...base, '--only', 'bad'], env);
      assert.equal(rerun.code, 0, rerun.stderr);
      assert.match(rerun.stdout, /submitted \(2 now\)/);
      assert.match(rerun.stdout, /Rerun of 2 trace\(s\) marked bad: 2 submitted; their previous answers came from run /);
      assert.equal(sandbox.answerOf(1, 'bench-0003'), 'v2 bench-0003');
      assert.equal(sandbox.answerOf(1, 'bench-0004'), 'v1 bench-0004', 'the others untouched');
      await store.load();
      assert.equal(store.runs.length, 2);
      assert.match(store.runs[1]!.target, /^python: model\.py:answer @ /);
      writeFileSync(join(dir, 'broken.py'), 'import not_a_module_anywhere\n');
      const broken = await cli(['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', join(dir, 's2'), '--target', 'python', '--python-file', join(dir, 'broken.py')], env);
      assert.equal(broken.code, 2, broken.stdout + broken.stderr);
      assert.match(broken.stdout + broken.stderr, /ModuleNotFoundError: No module named 'not_a_module_anywhere'/);
      assert.doesNotMatch(broken.stdout, /failed: "/);
    } finally {
      await sandbox.close();
    }
  });
});
