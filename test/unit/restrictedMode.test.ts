import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { absoluteCommand, isInside, ownCodeVerdict } from '../../src/core/targets/restrictedMode';
import type { OwnCodePlaces } from '../../src/core/targets/restrictedMode';
import { tempDir } from './helpers/runs';

const REPO = '/home/me/src/repo';
const HOME = '/home/me';
const STORAGE = '/home/me/.config/Code/User/globalStorage/eval-runner.eval-runner';
const untrusted = (spec: OwnCodePlaces['spec'], more: Partial<OwnCodePlaces> = {}) =>
  ownCodeVerdict({ spec, trusted: false, folders: [REPO], fallbacks: [HOME, STORAGE], platform: 'linux', ...more });

describe('Restricted Mode: nothing of an untrusted workspace runs (the one decision)', () => {
  it('knows what lies in a folder: POSIX by case, Windows and macOS without it, drive letters, either slash', () => {
    assert.ok(isInside('/repo', '/repo/agent.py', 'linux'));
    assert.ok(isInside('/repo', '/repo', 'linux'), 'the folder itself');
    assert.ok(isInside('/repo', '/repo/a/../b/x.py', 'linux'));
    assert.ok(!isInside('/repo', '/repo2/agent.py', 'linux'), 'a sibling whose name starts the same');
    assert.ok(!isInside('/repo', '/agent.py', 'linux'));
    assert.ok(isInside('/repo', '/repo/..hidden/x.py', 'linux'), 'a name starting with two dots is still inside');
    assert.ok(!isInside('/repo', '/Repo/agent.py', 'linux'), 'Linux names differ by case');
    assert.ok(isInside('/Users/me/Repo', '/users/me/repo/agent.py', 'darwin'), 'macOS disks ignore case by default');
    assert.ok(isInside('C:\\Users\\me\\repo', 'c:/users/ME/Repo/agent.py', 'win32'));
    assert.ok(isInside('c:\\repo\\', 'C:\\REPO', 'win32'));
    assert.ok(!isInside('C:\\repo', 'D:\\repo\\agent.py', 'win32'), 'another drive');
    assert.ok(!isInside('C:\\repo', 'C:\\repository\\agent.py', 'win32'));
  });

  it('refuses a python file in the workspace, by its full path or a relative one left from before', () => {
    assert.deepEqual(untrusted({ type: 'python', file: `${REPO}/agent.py` }), { ok: false, refused: 'file', path: `${REPO}/agent.py`, relative: false });
    assert.deepEqual(untrusted({ type: 'python', file: 'agent.py' }), { ok: false, refused: 'file', path: `${REPO}/agent.py`, relative: true });
    assert.deepEqual(untrusted({ type: 'python', file: './sub/../agent.py' }), { ok: false, refused: 'file', path: `${REPO}/agent.py`, relative: true });
    // In a second workspace folder too.
    const second = untrusted({ type: 'python', file: '/work/other/agent.py' }, { folders: [REPO, '/work/other'] });
    assert.equal(second.ok, false);
  });

  it('runs a python file of the user\'s own outside the workspace, in its own folder, never the workspace', () => {
    assert.deepEqual(untrusted({ type: 'python', file: '/opt/models/agent.py', function: 'answer' }), {
      ok: true,
      spec: { type: 'python', file: '/opt/models/agent.py', function: 'answer' },
      cwd: '/opt/models',
    });
    // Its folder holds the workspace (~/agent.py beside ~/src/repo): the storage folder, as home holds it too.
    const holding = untrusted({ type: 'python', file: `${HOME}/agent.py` });
    assert.equal(holding.ok && holding.cwd, STORAGE);
    // The workspace is the home folder: its own folder elsewhere is fine, a bare fallback is not.
    const atHome = untrusted({ type: 'python', file: '/opt/m/agent.py' }, { folders: [HOME] });
    assert.equal(atHome.ok && atHome.cwd, '/opt/m');
  });

  it('refuses an interpreter the workspace chose: in it (a .venv, by full or relative path), or named by its settings', () => {
    const file = '/opt/models/agent.py';
    assert.deepEqual(untrusted({ type: 'python', file, python: `${REPO}/.venv/bin/python` }), { ok: false, refused: 'interpreter', path: `${REPO}/.venv/bin/python`, relative: false });
    assert.deepEqual(untrusted({ type: 'python', file, python: '.venv/bin/python' }), { ok: false, refused: 'interpreter', path: `${REPO}/.venv/bin/python`, relative: true });
    assert.deepEqual(untrusted({ type: 'python', file }, { interpreter: { path: `${REPO}/.venv/bin/python`, byWorkspace: false } }), {
      ok: false,
      refused: 'interpreter',
      path: `${REPO}/.venv/bin/python`,
      relative: false,
    });
    assert.deepEqual(untrusted({ type: 'python', file }, { interpreter: { path: '/tmp/evil/python', byWorkspace: true } }), { ok: false, refused: 'workspaceInterpreter', path: '/tmp/evil/python', relative: false });
    // The user's own: a name looked up on PATH, or the Python extension's environment outside the workspace.
    const own = untrusted({ type: 'python', file }, { interpreter: { path: '/usr/bin/python3.12', byWorkspace: false } });
    assert.equal(own.ok && own.spec.type === 'python' && own.spec.python, '/usr/bin/python3.12');
    assert.equal(untrusted({ type: 'python', file, python: 'python3' }).ok, true);
    // Named in the user's settings, it wins over the extension's, even one a workspace setting chose.
    assert.equal(untrusted({ type: 'python', file, python: '/usr/bin/python3' }, { interpreter: { path: '/tmp/evil/python', byWorkspace: true } }).ok, true);
  });

  it('refuses a worker or a command naming a file of the workspace; the others start outside it', () => {
    assert.deepEqual(untrusted({ type: 'worker', command: `${REPO}/bin/worker --fast` }), { ok: false, refused: 'file', path: `${REPO}/bin/worker`, relative: false });
    assert.deepEqual(untrusted({ type: 'worker', command: 'node ./worker.js' }), { ok: false, refused: 'file', path: `${REPO}/worker.js`, relative: true });
    assert.deepEqual(untrusted({ type: 'worker', command: `python3 -u --script=${REPO}/w.py` }), { ok: false, refused: 'file', path: `${REPO}/w.py`, relative: false });
    assert.deepEqual(untrusted({ type: 'command', command: `cat | ${REPO}/answer.sh 2>/dev/null` }), { ok: false, refused: 'file', path: `${REPO}/answer.sh`, relative: false });
    assert.deepEqual(untrusted({ type: 'command', command: 'cd src && ./run' }), { ok: false, refused: 'file', path: `${REPO}/run`, relative: true });
    // The user's own programs: a worker given by its path starts in its folder; the rest in the home folder.
    assert.deepEqual(untrusted({ type: 'worker', command: '/opt/w/worker --url=http://127.0.0.1:8/x' }), { ok: true, spec: { type: 'worker', command: '/opt/w/worker --url=http://127.0.0.1:8/x' }, cwd: '/opt/w' });
    // The home folder holds this workspace (~/src/repo): the editor's storage then; a workspace elsewhere: home.
    assert.deepEqual(untrusted({ type: 'command', command: 'tr a-z A-Z 2>/dev/null' }), { ok: true, spec: { type: 'command', command: 'tr a-z A-Z 2>/dev/null' }, cwd: STORAGE });
    const elsewhere = untrusted({ type: 'worker', command: 'python3 -m mine.worker' }, { folders: ['/work/repo'] });
    assert.equal(elsewhere.ok && elsewhere.cwd, HOME);
    // The workspace is the home folder itself (which holds the editor's storage too): no working folder is left.
    assert.deepEqual(untrusted({ type: 'command', command: 'cat' }, { folders: [HOME] }), { ok: false, refused: 'workingFolder', path: HOME, relative: false });
    assert.deepEqual(untrusted({ type: 'command', command: 'cat' }, { folders: ['/'] }), { ok: false, refused: 'workingFolder', path: HOME, relative: false });
  });

  it('in a trusted workspace: everything runs as before, in the workspace, a relative file read from it', () => {
    const trusted = (spec: OwnCodePlaces['spec']) => ownCodeVerdict({ spec, trusted: true, folders: [REPO], fallbacks: [HOME], platform: 'linux' });
    assert.deepEqual(trusted({ type: 'python', file: 'agent.py' }), { ok: true, spec: { type: 'python', file: `${REPO}/agent.py` }, cwd: REPO });
    assert.deepEqual(trusted({ type: 'worker', command: 'node ./w.js' }), { ok: true, spec: { type: 'worker', command: 'node ./w.js' }, cwd: REPO });
    assert.deepEqual(trusted({ type: 'echo' }), { ok: true, spec: { type: 'echo' }, cwd: undefined });
  });

  it('takes Windows paths as data: drive letters and case, a relative file, the working folder', () => {
    const win = (spec: OwnCodePlaces['spec'], folders = ['C:\\Users\\me\\repo']) => ownCodeVerdict({ spec, trusted: false, folders, fallbacks: ['C:\\Users\\me'], platform: 'win32' });
    assert.deepEqual(win({ type: 'python', file: 'c:/users/ME/Repo/agent.py' }), { ok: false, refused: 'file', path: 'c:/users/ME/Repo/agent.py', relative: false });
    assert.deepEqual(win({ type: 'python', file: 'agent.py' }), { ok: false, refused: 'file', path: 'C:\\Users\\me\\repo\\agent.py', relative: true });
    assert.deepEqual(win({ type: 'python', file: 'D:\\tools\\agent.py', python: 'C:\\Users\\me\\REPO\\.venv\\Scripts\\python.exe' }), {
      ok: false,
      refused: 'interpreter',
      path: 'C:\\Users\\me\\REPO\\.venv\\Scripts\\python.exe',
      relative: false,
    });
    const own = win({ type: 'python', file: 'D:\\tools\\agent.py', python: 'py' });
    assert.equal(own.ok && own.cwd, 'D:\\tools');
    assert.deepEqual(win({ type: 'worker', command: 'node .\\w.js' }), { ok: false, refused: 'file', path: 'C:\\Users\\me\\repo\\w.js', relative: true });
    assert.deepEqual(win({ type: 'worker', command: '"C:\\Program Files\\nodejs\\node.exe" D:\\w\\w.js' }), {
      ok: true,
      spec: { type: 'worker', command: '"C:\\Program Files\\nodejs\\node.exe" D:\\w\\w.js' },
      cwd: 'C:\\Program Files\\nodejs',
    });
  });

  it('follows symlinks: a link outside the workspace to its file is refused, and a workspace reached through a link', () => {
    const dir = realpathSync(tempDir());
    const repo = join(dir, 'repo');
    const outside = join(dir, 'outside');
    mkdirSync(repo);
    mkdirSync(outside);
    writeFileSync(join(repo, 'agent.py'), 'def answer(p):\n    return p\n');
    symlinkSync(join(repo, 'agent.py'), join(outside, 'agent.py'));
    symlinkSync(repo, join(dir, 'link-to-repo'));
    const real = (p: string) => {
      try {
        return realpathSync(p);
      } catch {
        return p;
      }
    };
    const verdict = (file: string, folders: string[]) => ownCodeVerdict({ spec: { type: 'python', file }, trusted: false, folders, fallbacks: [outside], platform: process.platform, realpath: real });
    assert.equal(verdict(join(outside, 'agent.py'), [repo]).ok, false, 'a link outside, to the workspace\'s file');
    assert.equal(verdict(join(repo, 'agent.py'), [join(dir, 'link-to-repo')]).ok, false, 'the workspace opened through a link');
    assert.equal(ownCodeVerdict({ spec: { type: 'python', file: join(outside, 'agent.py') }, trusted: false, folders: [repo], fallbacks: [outside], platform: process.platform }).ok, true, 'without realpath a link is taken as it is');
  });

  it('stores a worker command with the full paths of its files, as they were when it was chosen', () => {
    const there = new Set(['/repo/w.js']);
    const exists = (p: string) => there.has(p);
    assert.equal(absoluteCommand('node w.js --fast', '/repo', exists, 'linux'), 'node /repo/w.js --fast');
    assert.equal(absoluteCommand('./bin/worker -v', '/repo', exists, 'linux'), '/repo/bin/worker -v');
    assert.equal(absoluteCommand('node "my dir/w.js"', '/repo', exists, 'linux'), 'node "/repo/my dir/w.js"');
    assert.equal(absoluteCommand('python3 -m pkg.worker', '/repo', exists, 'linux'), 'python3 -m pkg.worker', 'unchanged: no word is a path');
    assert.equal(absoluteCommand('/opt/w --url=http://x/y', '/repo', exists, 'linux'), '/opt/w --url=http://x/y');
    assert.equal(absoluteCommand('node .\\w.js', 'C:\\my repo', () => false, 'win32'), 'node "C:\\my repo\\w.js"');
  });
});
