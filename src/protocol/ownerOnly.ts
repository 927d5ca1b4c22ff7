// Folders and files only this user can reach: the runner's socket folder, the journal's folder it writes its runner
// file in, and that file. Checked by the runner when it makes them, and by a window before it connects: a folder in
// /tmp outlives a runner killed hard, and after a reboot any local user may create one of that name.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, linkSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

/**
 * Why this folder is not this user's alone (undefined: it is): a symbolic link, another user's folder, or one other
 * users may enter. On Windows there are no uids or mode bits to read; the handshake guards the pipe there.
 */
export function folderProblem(dir: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(dir);
  } catch (error) {
    return `${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (stat.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!stat.isDirectory()) return `${dir} is not a folder`;
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  if (stat.uid !== uid) return `${dir} belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  if (stat.mode & 0o077) return `${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}, not 700)`;
  return undefined;
}

/**
 * Makes the folder owner-only (0700), or checks the one there: ours but looser (an older version, a umask) is
 * tightened; a link or another user's folder is refused. mkdir's mode alone does neither for a folder that exists.
 */
export function ownerOnlyFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  if (stat.isSymbolicLink() || !stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) {
    throw new Error(`${folderProblem(dir) ?? `${dir} is not this user's folder`}: Eval Runner keeps its runner's files only in a folder of this user's own.`);
  }
  if (uid !== undefined && stat.mode & 0o077) chmodSync(dir, 0o700);
}

// Not on Windows, where a file create does not follow a link anyway.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Writes a file owner-only, whole or not at all: created aside under a fresh name exclusively (a file or a link of
 * that name makes it fail; none is followed), then renamed over the file (a link there is replaced, not followed),
 * or with `create` linked in only where no file is (EEXIST otherwise).
 */
export function writeOwnerOnlyFile(path: string, text: string, only: 'replace' | 'create' = 'replace'): void {
  const aside = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  const fd = openSync(aside, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, 0o600);
  try {
    writeSync(fd, text);
  } catch (error) {
    closeSync(fd);
    rmSync(aside, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    // create: linked in under its name, which fails (EEXIST) when a file is there, where a rename would replace it.
    if (only === 'create') linkSync(aside, path);
    else renameSync(aside, path);
  } catch (error) {
    rmSync(aside, { force: true });
    throw error;
  }
  if (only === 'create') rmSync(aside, { force: true });
}
