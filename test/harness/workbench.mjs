// Starts a real VS Code (code-server 4.100.3: the VS Code 1.100.3 workbench and its Node extension host)
// on loopback with a fresh profile, and drives it with Debian's Chromium through playwright-core.
// Facts behind every flag: ../shared/notes/real-editor-testing.md.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CODE_SERVER_BIN = join(ROOT, '.vscode-test', 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');

const QUIET_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.enableExperiments': false,
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'workbench.tips.enabled': false,
  'chat.commandCenter.enabled': false,
  'workbench.colorTheme': 'Default Dark Modern',
  // code-server is a remote to the workbench: its extension host looks for ports to forward by running `ls -l
  // /proc/*/fd/*` and `ps -A` in shells every 2 s or more; VS Code on the desktop, where users run us, does not.
  // autoForwardPorts alone does not stop the scan (strace: 6 execs in 10 s against 12); a source of "output" does
  // (none, and the idle extension host's 35 ms of CPU a second fell to 1).
  'remote.autoForwardPorts': false,
  'remote.autoForwardPortsSource': 'output',
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts code-server. Everything it writes (profile, extensions, XDG dirs, TMPDIR, IPC sockets) stays in runDir.
 * trust: workspace trust on, a folder opening in Restricted Mode (no prompt), for the cases about it; off otherwise.
 * @param {{ runDir?: string, userDataDir?: string, extensionsDir?: string, settings?: object, env?: object, args?: string[], trust?: boolean, log?: (line: string) => void }} options
 */
export async function startCodeServer(options = {}) {
  const runDir = options.runDir ?? mkdtempSync(join(tmpdir(), 'eval-runner-editor-'));
  const userDataDir = options.userDataDir ?? join(runDir, 'user-data');
  const extensionsDir = options.extensionsDir ?? join(runDir, 'extensions');
  for (const d of [userDataDir, extensionsDir, join(runDir, 'tmp'), join(runDir, 'xdg-config'), join(runDir, 'xdg-data'), join(runDir, 'xdg-cache')]) {
    mkdirSync(d, { recursive: true });
  }
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  const trust = options.trust ? { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never' } : {};
  writeFileSync(join(userDataDir, 'User', 'settings.json'), JSON.stringify({ ...QUIET_SETTINGS, ...trust, ...options.settings }, null, 2));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      CODE_SERVER_BIN,
      '--config', '/dev/null',
      '--bind-addr', `127.0.0.1:${port}`,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(options.trust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--user-data-dir', userDataDir,
      '--extensions-dir', extensionsDir,
      ...(options.args ?? []),
    ],
    {
      env: {
        ...process.env,
        ...options.env,
        TMPDIR: join(runDir, 'tmp'),
        XDG_CONFIG_HOME: join(runDir, 'xdg-config'),
        XDG_DATA_HOME: join(runDir, 'xdg-data'),
        XDG_CACHE_HOME: join(runDir, 'xdg-cache'),
        // The journals' shared state folder (the CLI's and the editor's), also kept inside the run.
        XDG_STATE_HOME: options.env?.XDG_STATE_HOME ?? join(runDir, 'xdg-state'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log = options.log ?? (() => undefined);
  child.stdout.on('data', (d) => log(String(d)));
  child.stderr.on('data', (d) => log(String(d)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('code-server did not answer /healthz within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    runDir,
    userDataDir,
    extensionsDir,
    remote: (absPath) => `vscode-remote://127.0.0.1:${port}${absPath}`,
    stop: () =>
      /** @type {Promise<void>} */ (new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      })),
  };
}

/** Headless Debian Chromium with a fresh profile; flags keep it off this machine's closed network. */
export async function launchBrowser(profileDir, options = {}) {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: options.viewport ?? { width: 1400, height: 900 },
    colorScheme: options.colorScheme ?? 'dark',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** The workbench URL for a folder, optionally with development/test extension paths in the payload. */
export function workbenchUrl(server, folder, payload = []) {
  const query = new URLSearchParams({ folder });
  if (payload.length) query.set('payload', JSON.stringify(payload));
  return `${server.url}/?${query.toString()}`;
}
