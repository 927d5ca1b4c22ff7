import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepLeftSocketFolders } from '../../src/protocol/runnerFiles';

describe('socket folders a run killed hard left behind', () => {
  it('are swept at the next start: a dead pid, a minute old, nobody listening; every other folder is kept', async function () {
    if (process.platform === 'win32') return this.skip(); // named pipes: no folders
    const tmp = mkdtempSync(join(tmpdir(), 'evr-sweep-test-'));
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const old = (Date.now() - 10 * 60_000) / 1000;
    const folder = (name: string, aged = true) => {
      const dir = join(tmp, name);
      mkdirSync(dir, { mode: 0o700 });
      if (aged) utimesSync(dir, old, old);
      return dir;
    };
    const left = folder(`evr-${dead}-left`);
    const alive = folder(`evr-${process.pid}-alive`);
    const young = folder(`evr-${dead}-young`, false);
    const other = folder('evr-nopid');
    const listening = folder(`evr-${dead}-listening`);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(listening, 's'), resolve));
    utimesSync(listening, old, old);
    try {
      assert.deepEqual(await sweepLeftSocketFolders(tmp), [left]);
      assert.equal(existsSync(left), false);
      for (const kept of [alive, young, other, listening]) assert.ok(existsSync(kept), `${kept} was swept`);
    } finally {
      server.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
