import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { journalPath, RunSteering } from '../../src/core';
import { RemoteRun } from '../../src/extension/runs/runnerClient';
import { listenForRun } from '../../src/protocol/runListener';
import { liveRunner, runnerFilePath } from '../../src/protocol/runnerFiles';
import { tempDir } from './helpers/runs';

describe('a window attaching to a run as the run ends', () => {
  it("is not left waiting for ever when the run closes its listener before it answers the window's state request", async function () {
    if (process.platform === 'win32') return this.skip();
    const key = { origin: 'http://127.0.0.1:9', kind: 'benchmark' as const, evaluationId: 1 };
    const journal = journalPath(tempDir(), key);
    // A CLI run's own listener (as `eval-runner run` listens).
    const listener = (await listenForRun({ journalFile: journal, steering: new RunSteering(), label: 'ending', key, cancel: () => undefined }))!;
    const file = liveRunner(journal)!;
    let closed = false;
    const end = () => {
      if (!closed) listener.close();
      closed = true;
    };
    // Between the window and the run: the run ends, closing its listener, once the window proved itself and its
    // state request is on its way (the window of the history test's timeout, found under load).
    const relay = createServer((window: Socket) => {
      const run = connect(file.socket);
      window.on('data', (d: Buffer) => (d.toString('latin1').includes('"evalRunner/state"') ? end() : run.write(d)));
      run.pipe(window);
      for (const s of [window, run]) s.on('error', () => undefined).on('close', () => (window.destroy(), run.destroy()));
    });
    const path = join(mkdtempSync(join(tmpdir(), 'evr-')), 's');
    await new Promise<void>((resolve) => relay.listen(path, resolve));
    writeFileSync(runnerFilePath(journal), JSON.stringify({ ...file, socket: path }), { mode: 0o600 });
    const logs: string[] = [];
    try {
      const attached = await RemoteRun.attach(journal, { progress: () => undefined, log: (_level, message) => logs.push(message), needToken: () => Promise.resolve(undefined) });
      assert.ok(closed, 'the run ended while the window attached');
      assert.equal(attached, undefined, 'the window does not follow a run that is over (it reads the journal instead)');
      assert.match(logs.join('\n'), /Not attaching to the runner .*: the runner closed the connection before it answered/);
    } finally {
      end();
      relay.close();
    }
  });
});
