import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/server';

/**
 * A sandbox on a port no earlier test's journal is kept under. The editor keeps journals by origin in one state folder
 * for the whole suite, and the suite starts a hundred sandboxes on ports the system picks: two of them on the same port
 * share a journal, and a run there meets the other test's answers ("its answers came from another target").
 */
export async function freshSandbox(options: SandboxOptions): Promise<Sandbox> {
  for (let attempt = 0; ; attempt++) {
    const sandbox = await startSandbox(options);
    const port = new URL(sandbox.baseUrl).port;
    if (options.port !== 0 || attempt >= 20 || !journalFolderExists(port)) return sandbox;
    await sandbox.close();
  }
}

function journalFolderExists(port: string): boolean {
  const state = process.env.XDG_STATE_HOME;
  if (!state) return false;
  try {
    return readdirSync(join(state, 'eval-runner')).some((name) => name.startsWith(`127.0.0.1_${port}-`));
  } catch {
    return false;
  }
}
