// Idempotent set-up of the real-editor test tools: Debian packages (Chromium, code-server's build needs,
// ripgrep) and code-server 4.100.3 (= VS Code 1.100.3) in a git-ignored folder of the project.
// Returns in about a second when everything is there. Prints one line "editor-setup: ready|skipped".
// EVAL_RUNNER_SKIP_EDITOR_TESTS=1 skips the editor suites (loudly) where nothing can be installed.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CODE_SERVER_VERSION = '4.100.3';
const CODE_SERVER_DIR = join(ROOT, '.vscode-test', 'code-server');
export const CODE_SERVER_BIN = join(CODE_SERVER_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const MARKER = join(CODE_SERVER_DIR, `.installed-${CODE_SERVER_VERSION}`);
// code-server's native modules need these to build; chromium drives the workbench; rg is VS Code's search.
const APT_PACKAGES = [
  'chromium',
  'fonts-liberation',
  'build-essential',
  'pkg-config',
  'python3',
  'libkrb5-dev',
  'libx11-dev',
  'libxkbfile-dev',
  'libsecret-1-dev',
  'ripgrep',
];
// @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache has it (values read from
// code-server 4.100.3's lib/vscode/npm-shrinkwrap.json and the ripgrep package's lib/postinstall.js).
const RIPGREP_NPM_VERSION = '1.15.11';
const RIPGREP_TAG = 'v13.0.0-10';

function log(message) {
  process.stderr.write(`editor-setup: ${message}\n`);
}

function fail(message) {
  if (process.env.EVAL_RUNNER_SKIP_EDITOR_TESTS === '1') {
    log('!'.repeat(70));
    log(`SKIPPING THE EDITOR SUITES (EVAL_RUNNER_SKIP_EDITOR_TESTS=1): ${message}`);
    log('!'.repeat(70));
    console.log('editor-setup: skipped');
    process.exit(0);
  }
  log(message);
  log('Set EVAL_RUNNER_SKIP_EDITOR_TESTS=1 to run the other suites without the editor ones.');
  process.exit(1);
}

function missingPackages() {
  return APT_PACKAGES.filter((p) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' });
    return r.status !== 0 || !r.stdout.includes('install ok installed');
  });
}

function ensurePackages() {
  const hasDpkg = spawnSync('dpkg-query', ['--version']).status === 0;
  if (!hasDpkg) {
    if (existsSync('/usr/bin/chromium') && spawnSync('rg', ['--version']).status === 0) return;
    fail(`This machine has no dpkg/apt. Install Chromium (at /usr/bin/chromium), ripgrep, and the build tools for code-server's native modules (see ${join('scripts', 'setupEditor.mjs')}).`);
  }
  const missing = missingPackages();
  if (missing.length === 0) return;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || spawnSync('apt-get', ['--version']).status !== 0) {
    fail(`Missing Debian packages: ${missing.join(' ')}. Install them with: sudo apt-get install -y ${missing.join(' ')}`);
  }
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (update.status !== 0) fail('apt-get update failed.');
  const install = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
  if (install.status !== 0) fail(`apt-get install failed for: ${missing.join(' ')}`);
}

function ensureCodeServer() {
  if (existsSync(MARKER) && existsSync(CODE_SERVER_BIN)) return;
  log(`installing code-server ${CODE_SERVER_VERSION} into ${CODE_SERVER_DIR} (about a minute)`);
  rmSync(CODE_SERVER_DIR, { recursive: true, force: true });
  mkdirSync(CODE_SERVER_DIR, { recursive: true });
  writeFileSync(
    join(CODE_SERVER_DIR, 'package.json'),
    JSON.stringify({ name: 'eval-runner-code-server', private: true, dependencies: { 'code-server': CODE_SERVER_VERSION } }, null, 2),
  );
  const tmp = mkdtempSync(join(CODE_SERVER_DIR, 'tmp-'));
  const cache = join(tmp, `vscode-ripgrep-cache-${RIPGREP_NPM_VERSION}`);
  mkdirSync(cache, { recursive: true });
  const rgDir = mkdtempSync(join(tmp, 'rg-'));
  execFileSync('cp', [execFileSync('which', ['rg'], { encoding: 'utf8' }).trim(), join(rgDir, 'rg')]);
  execFileSync('tar', ['-czf', join(cache, `ripgrep-${RIPGREP_TAG}-x86_64-unknown-linux-musl.tar.gz`), '-C', rgDir, 'rg']);
  const env = {
    ...process.env,
    TMPDIR: tmp,
    npm_config_unsafe_perm: 'true', // its postinstall refuses to run as root otherwise
    npm_config_yes: 'true', // node-pty's postinstall runs npx node-gyp
    npm_config_nodedir: '/usr', // build against this machine's Node headers, no download
    npm_config_dangerously_allow_all_scripts: 'true', // npm 11 blocks dependency install scripts; code-server needs its own
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  const r = spawnSync('npm', ['install', '--no-save', '--loglevel=error'], { cwd: CODE_SERVER_DIR, stdio: 'inherit', env });
  rmSync(tmp, { recursive: true, force: true });
  if (r.status !== 0 || !existsSync(CODE_SERVER_BIN)) fail('npm install code-server failed (see the output above).');
  const version = JSON.parse(readFileSync(join(CODE_SERVER_DIR, 'node_modules', 'code-server', 'package.json'), 'utf8')).version;
  if (version !== CODE_SERVER_VERSION) fail(`code-server ${version} was installed, expected ${CODE_SERVER_VERSION}.`);
  writeFileSync(MARKER, version);
}

function ensurePlaywright() {
  const pkg = join(ROOT, 'node_modules', 'playwright-core', 'package.json');
  if (!existsSync(pkg)) fail('playwright-core is missing: run npm ci first.');
  return JSON.parse(readFileSync(pkg, 'utf8')).version;
}

const started = Date.now();
ensurePackages();
ensureCodeServer();
const pw = ensurePlaywright();
log(`code-server ${CODE_SERVER_VERSION}, playwright-core ${pw}, ${execFileSync('/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim()} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
console.log('editor-setup: ready');
