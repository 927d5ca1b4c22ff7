// The journal's lock: a file beside the journal (`<journal>.lock`) naming the pid of the one process that writes it.
// Every file operation goes through JournalFs (storage.ts), the layer the journal writes through, so a fault test
// that injects a full disk or an I/O error there reaches the lock too.
import { readFileSync } from 'node:fs';
import { NODE_FS } from './storage';
import type { JournalFs } from './storage';

export class JournalLockedError extends Error {
  override name = 'JournalLockedError';
}

export function lockPathOf(journalFile: string): string {
  return `${journalFile}.lock`;
}

// Locks this process holds: a second writer in the same process (an editor window running and
// submitting at once) must be refused as surely as one in another process.
const heldLocks = new Set<string>();

export async function acquireLock(fs: JournalFs, lockPath: string): Promise<void> {
  if (heldLocks.has(lockPath)) {
    throw new JournalLockedError('This evaluation is already running in this process; wait for it to finish or cancel it.');
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      writeNewFile(fs, lockPath, String(process.pid));
      heldLocks.add(lockPath);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await lockHolder(fs, lockPath);
    if (holder === undefined) continue; // released meanwhile: create it again
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new JournalLockedError(`Another Eval Runner process (pid ${holder}) is running this evaluation; wait for it to finish or stop it.`);
    }
    // The holder died (a crash or SIGKILL): the lock is stale. Taking it over must be atomic, or two runs
    // started together would both delete it and both go on.
    if (await takeOverStaleLock(fs, lockPath, holder)) {
      heldLocks.add(lockPath);
      return;
    }
    // Another process is taking over: it will hold the lock (and the check above refuses) in a moment.
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
  }
  throw new JournalLockedError('Could not lock the journal; try again.');
}

export function releaseLock(fs: JournalFs, lockPath: string): void {
  try {
    fs.rmSync(lockPath, { force: true });
  } catch {
    // A lock left behind names a dead pid: the next run takes it over.
  }
  heldLocks.delete(lockPath);
}

/**
 * Takes over a lock whose holder is dead. Takeovers are serialised by a second lock file created exclusively;
 * inside it, the lock is replaced by a rename (so it never disappears, and a plain exclusive create elsewhere
 * keeps failing) only if it still names the dead holder seen before. Then ownership is read back.
 */
async function takeOverStaleLock(fs: JournalFs, lockPath: string, staleHolder: number): Promise<boolean> {
  const mutex = `${lockPath}.takeover`;
  try {
    writeNewFile(fs, mutex, String(process.pid));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A takeover mutex left by a process that died inside its few milliseconds: clear it for the next try.
    // (Two processes clearing the same dead mutex at once could both get in; that needs a crash inside the
    // takeover itself to begin with.)
    const owner = await lockHolder(fs, mutex);
    if (owner !== undefined && (owner === 0 || !isAlive(owner))) fs.rmSync(mutex, { force: true });
    return false;
  }
  try {
    if ((await lockHolder(fs, lockPath)) !== staleHolder) return false;
    fs.renameSync(writeAside(fs, lockPath, String(process.pid)), lockPath);
    return (await lockHolder(fs, lockPath)) === process.pid;
  } finally {
    fs.rmSync(mutex, { force: true });
  }
}

/**
 * Creates a file with its whole text at once: written aside, then hard-linked into place, which fails with
 * EEXIST when the name is taken. A reader never sees the file empty, so an empty lock is never "a holder
 * mid-write" that another process could mistake for a dead one.
 */
function writeNewFile(fs: JournalFs, path: string, text: string): void {
  const aside = writeAside(fs, path, text);
  try {
    fs.linkSync(aside, path);
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

function writeAside(fs: JournalFs, path: string, text: string): string {
  const aside = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const fd = fs.openSync(aside, 'w', 0o600);
  try {
    fs.writeSync(fd, text);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(aside, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  return aside;
}

/** The pid a lock file's text names; 0 when it holds no pid (hand-edited). */
function pidIn(text: string): number {
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
}

/** The pid a lock file names; 0 when it holds no pid, undefined when there is no such file. Other failures throw. */
async function lockHolder(fs: JournalFs, path: string): Promise<number | undefined> {
  let text: string;
  try {
    text = (await fs.readFile(path)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return pidIn(text);
}

/**
 * The pid the journal's lock names, read at once (a window deciding what to offer cannot wait): undefined when
 * there is no lock, it names no pid, or it cannot be read.
 */
export function journalLockPid(journalFile: string, fs: JournalFs = NODE_FS): number | undefined {
  try {
    return pidIn(fs.readFileSync(lockPathOf(journalFile)).toString('utf8')) || undefined;
  } catch {
    return undefined;
  }
}

/** Whether a live process holds the journal's lock (a CLI run, another window's run). */
export function journalHeld(journalFile: string, fs: JournalFs = NODE_FS): boolean {
  const pid = journalLockPid(journalFile, fs);
  return pid !== undefined && isAlive(pid);
}

/** Whether a process of this pid exists (signal 0 checks without signalling; EPERM: it exists, another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !isZombie(pid);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A process that ended and waits for its parent to read how (Linux's /proc says Z): gone, though signal 0 still
 * reaches it. A runner killed hard is one until the window that started it reaps it, which may come after the
 * window saw its socket close and looked for it again.
 */
function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z';
  } catch {
    return false;
  }
}

/**
 * Whether a process of this pid exists and is this user's: what a runner file needs. EPERM is another user's process
 * (the pid came round again after the runner died, or a process placed there): not our runner, whatever it says.
 */
export function isOwnProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !isZombie(pid);
  } catch {
    return false;
  }
}
