// What the machine's processes spend, read from /proc (Linux only): CPU time by role, the extension hosts of a
// code-server, a process's open files and resident set.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { CLI } from './processes.mjs';

/**
 * CPU time (user + system, ms) of this process's descendants (the sandbox, the CLI, code-server and its extension
 * host and the runner it starts, the browser Playwright drives), grouped by what each is, from /proc (Linux only;
 * empty elsewhere). Taken before and after a run, the difference says where the run's CPU went. Only descendants:
 * on a shared machine another bench's or test's browser, sandbox or runner would otherwise count as this one's.
 */
export function cpuByRole(root = process.pid) {
  const ticksPerMs = 100 / 1000; // USER_HZ is 100 on Linux
  /** @type {Record<string, number>} */
  const byRole = {};
  /** @type {Map<number, { parent: number, ticks: number, reaped: number }>} */
  const procs = new Map();
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return byRole;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime + stime, and cutime + cstime: what its children that ended spent (code-server's port scans are shells).
      procs.set(Number(pid), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  const descends = (/** @type {number} */ pid) => {
    for (let p = procs.get(pid)?.parent; p !== undefined && p > 1; p = procs.get(p)?.parent) if (p === root) return true;
    return false;
  };
  for (const [pid, { ticks, reaped }] of procs) {
    if (!descends(pid)) continue;
    try {
      const role = processRole(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
      if (role) byRole[role] = (byRole[role] ?? 0) + ticks / ticksPerMs;
      // The extension host's short-lived children (VS Code's remote port scan runs `ls` and `ps` every 2 s or so).
      // A runner it started counts here once it has exited and been reaped: the idle floor waits past its linger.
      if (role === 'extensionHost' && reaped) byRole['extensionHost children'] = (byRole['extensionHost children'] ?? 0) + reaped / ticksPerMs;
    } catch {
      // The process ended between the reads.
    }
  }
  return byRole;
}

function processRole(cmd) {
  if (cmd.includes('--type=extensionHost')) return 'extensionHost';
  if (/chrom(e|ium)/.test(cmd)) {
    const type = /--type=([\w-]+)/.exec(cmd)?.[1];
    return type ? `chromium ${type}` : 'chromium browser';
  }
  if (cmd.includes(' sandbox ')) return 'sandbox';
  // An editor's run goes on in its runner process (dist/runner.js), which lingers a few seconds after the run, so
  // a reading taken when the run's summary is logged still finds it.
  if (/[/\\]dist[/\\]runner\.js /.test(cmd)) return 'runner';
  if (cmd.includes('code-server') || cmd.includes('bootstrap-fork')) return 'code-server';
  if (cmd.includes(CLI)) return 'cli';
  return undefined;
}

/** What each role spent between two readings of cpuByRole(), in ms, the roles that spent nothing left out. */
export const cpuDelta = (/** @type {Record<string, number>} */ before, /** @type {Record<string, number>} */ after) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => /** @type {const} */ ([k, Math.round(v - (before[k] ?? 0))])).filter(([, v]) => v > 0));

/** The extension hosts of this code-server (its processes whose ancestry names its folder), by pid. */
export function extensionHostsOf(runDir) {
  const cmdline = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  const parent = (pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  };
  const hosts = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!cmdline(pid).includes('--type=extensionHost')) continue;
      for (let p = parent(pid); p > 1; p = parent(p)) {
        if (cmdline(p).includes(runDir)) {
          hosts.push(Number(pid));
          break;
        }
      }
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return hosts;
}

/** Whether a process has this file open (a link in /proc/<pid>/fd). */
export function holdsOpen(pid, file) {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** A process's resident set and its peak so far, in MB (/proc/<pid>/status: VmRSS, VmHWM). */
export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (/** @type {string} */ name) => Number(/** @type {RegExpExecArray} */ (new RegExp(`${name}:\\s+(\\d+) kB`).exec(status))[1]);
  return { rssMB: kb('VmRSS') / 1024, peakMB: kb('VmHWM') / 1024 };
}
