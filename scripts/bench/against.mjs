// --against=<commit>: the chosen rows on this checkout and on a build of another commit, alternating, each round on
// its own sandbox, so a change is measured side by side on one machine at one time (the machine is shared and noisy:
// single runs vary by ±15 %, medians of alternating rounds far less). The other commit is checked out in a temporary
// worktree with this checkout's node_modules hard-linked, built, measured through its own dist/cli.js and out/, and
// removed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, median, measureBuild, say } from './processes.mjs';

/** The rows on both builds, `rounds` times, alternating which goes first; the figures' medians and their ratio. */
export async function against(commit, rows, wanted, rounds) {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${commit}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const there = checkout(sha);
  try {
    /** @type {Array<{ name: string, root: string, rounds: Array<Record<string, number>> }>} */
    const builds = [
      { name: 'this checkout', root: ROOT, rounds: [] },
      { name: sha.slice(0, 10), root: there, rounds: [] },
    ];
    for (let i = 0; i < rounds; i++) {
      for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
        say(`\nround ${i + 1} of ${rounds}: ${build.name}`);
        measureBuild(build.root);
        const figures = {};
        for (const row of rows) if (row.names.some(wanted)) Object.assign(figures, await row.measure(wanted));
        build.rounds.push(flatten(figures));
      }
    }
    measureBuild(ROOT);
    return sideBySide(builds);
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', there], { cwd: ROOT, stdio: 'ignore' });
    rmSync(there, { recursive: true, force: true });
  }
}

/** A detached worktree of the commit under bench/ (not in git), its node_modules hard-linked from ours, built. */
function checkout(sha) {
  mkdirSync(join(ROOT, 'bench'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'bench', `against-${sha.slice(0, 10)}-`));
  say(`building ${sha.slice(0, 10)} in ${dir}`);
  execFileSync('git', ['worktree', 'add', '--detach', dir, sha], { cwd: ROOT, stdio: 'ignore' });
  try {
    // Hard links cost no room and no time; where they cannot be made (another file system) a link to ours does.
    try {
      execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(dir, 'node_modules')], { stdio: 'ignore' });
    } catch {
      if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    }
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'inherit' });
    // The rows that time the core in a process of their own load its tsc output (processes.mjs builtModule).
    execFileSync(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { cwd: dir, stdio: 'inherit' });
  } catch (error) {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
    throw error;
  }
  return dir;
}

/** Every number in the figures, by its path (client.tracesPerSecond). */
function flatten(value, path = '', out = {}) {
  if (typeof value === 'number' && Number.isFinite(value)) out[path] = value;
  else if (value && typeof value === 'object' && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) flatten(v, path ? `${path}.${k}` : k, out);
  return out;
}

/**
 * Lines of the medians side by side, and the ratio of this checkout's to the other's.
 * @param {Array<{ name: string, rounds: Array<Record<string, number>> }>} builds
 */
function sideBySide([here, there]) {
  const keys = Object.keys(here.rounds[0] ?? {}).filter((k) => there.rounds.every((r) => k in r));
  const figures = {};
  say(`\n${'figure'.padEnd(36)} ${here.name.padStart(16)} ${there.name.padStart(16)}   ratio   (medians of ${here.rounds.length}; rounds)`);
  for (const key of keys) {
    const a = median(here.rounds.map((r) => r[key]));
    const b = median(there.rounds.map((r) => r[key]));
    figures[key] = { here: a, there: b, ratio: b === 0 ? undefined : a / b, hereRounds: here.rounds.map((r) => r[key]), thereRounds: there.rounds.map((r) => r[key]) };
    const rounds = `${figures[key].hereRounds.map(short).join(', ')} | ${figures[key].thereRounds.map(short).join(', ')}`;
    say(`${key.padEnd(36)} ${short(a).padStart(16)} ${short(b).padStart(16)}   ${b === 0 ? '  -  ' : `${(a / b).toFixed(2)}×`}   (${rounds})`);
  }
  return figures;
}

const short = (n) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(3));
