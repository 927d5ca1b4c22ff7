import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCommandTarget } from '../../src/core/targets/command/commandTarget';
import { createPythonTarget } from '../../src/core/targets/python/pythonTarget';
import { createWorkerTarget } from '../../src/core/targets/python/workerTarget';
import { spawnErrorText } from '../../src/core/targets/spawnErrors';
import { TargetError } from '../../src/core/targets/target';
import type { Target } from '../../src/core/targets/target';
import { tempDir } from './helpers/runs';

/** The error Node gives for starting this program, for real. */
function spawnError(program: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Error> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, [], { ...options, stdio: 'ignore' });
    child.once('error', resolve);
    child.once('exit', () => reject(new Error(`${program} started`)));
  });
}

async function sendError(target: Target): Promise<TargetError> {
  try {
    await target.send('hello', { signal: new AbortController().signal, timeoutMs: 10_000 });
  } catch (error) {
    assert.ok(error instanceof TargetError, String(error));
    return error;
  } finally {
    await target.close?.();
  }
  throw new Error('the target answered');
}

/** `spawn python9 ENOENT` in words: what was not found, and where it was looked for. */
describe('words for a process that could not start', () => {
  const dir = tempDir('eval-runner-spawn-');
  const binA = join(dir, 'bin-a');
  const binB = join(dir, 'bin-b');
  mkdirSync(binA);
  mkdirSync(binB);
  const notExecutable = join(binB, 'tool');
  writeFileSync(notExecutable, '#!/bin/sh\necho hi\n');
  chmodSync(notExecutable, 0o644);

  it('ENOENT for a name: not found, and each folder of PATH it was looked in', async () => {
    const env = { PATH: `${binA}:${binB}` };
    const text = spawnErrorText(await spawnError('python9', { env }), 'python9', { env, platform: 'linux' });
    assert.equal(text, `python9 was not found in any folder of PATH (${binA}, ${binB}). Install it, or give its full path.`);
    assert.match(spawnErrorText(await spawnError('python9', { env: { PATH: '' } }), 'python9', { env: { PATH: '' } }), /^python9 was not found: PATH is empty/);
  });

  it('ENOENT for a path given: no such file, named in full; for a missing folder to start in: that folder', async () => {
    const missing = join(dir, 'venv', 'bin', 'python');
    assert.equal(spawnErrorText(await spawnError(missing), missing), `${missing} was not found: there is no file ${missing}.`);
    const relative = spawnErrorText(await spawnError('./venv/bin/python', { cwd: dir }), './venv/bin/python', { cwd: dir });
    assert.equal(relative, `./venv/bin/python was not found: there is no file ${join(dir, 'venv/bin/python')}.`);
    const gone = join(dir, 'no-such-folder');
    assert.equal(spawnErrorText(await spawnError('/bin/sh', { cwd: gone }), '/bin/sh', { cwd: gone }), `the folder ${gone} to start /bin/sh in does not exist.`);
  });

  it('EACCES: the file found is not executable, named where it was found; EPERM: the system refused', async () => {
    const env = { PATH: `${binA}:${binB}` };
    const error = await spawnError('tool', { env });
    assert.equal((error as NodeJS.ErrnoException).code, 'EACCES');
    assert.match(spawnErrorText(error, 'tool', { env, platform: 'linux' }), new RegExp(`^${notExecutable} is not executable \\(permission denied\\)`));
    assert.match(spawnErrorText(await spawnError(notExecutable), notExecutable), /is not executable/);
    const eperm = Object.assign(new Error('spawn /usr/bin/x EPERM'), { code: 'EPERM' });
    assert.match(spawnErrorText(eperm, '/usr/bin/x'), /^the system did not permit starting \/usr\/bin\/x \(operation not permitted\)/);
    assert.equal(spawnErrorText(Object.assign(new Error('spawn x EMFILE'), { code: 'EMFILE' }), 'x'), 'spawn x EMFILE', 'another code keeps its own message');
  });

  it('the python, worker and command targets say it in these words', async () => {
    const file = join(dir, 'model.py');
    writeFileSync(file, 'def answer(prompt):\n    return prompt\n');
    const python = await sendError(createPythonTarget({ type: 'python', file, python: 'python9' } as never, { concurrency: 1 }));
    assert.match(python.message, /could not start: python9 was not found in any folder of PATH \(/);
    assert.doesNotMatch(python.message, /ENOENT/);
    const worker = await sendError(createWorkerTarget({ what: 'The worker', description: 'worker', program: notExecutable, args: [], workers: 1, env: process.env, handshake: true }));
    assert.match(worker.message, new RegExp(`could not start: ${notExecutable} is not executable`));
    const command = await sendError(createCommandTarget({ command: 'cat', cwd: join(dir, 'gone') }));
    assert.match(command.message, /The command could not start: the folder .*gone to start \/bin\/sh in does not exist\./);
    const notFound = await sendError(createCommandTarget({ command: 'python9 -V' }));
    assert.match(notFound.message, /^The command exited with 127, the shell found no program by the name it was given, in the path given or in any folder of PATH \(.*\): .*python9/s);
  });
});
