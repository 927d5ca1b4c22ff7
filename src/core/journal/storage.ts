import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir, open, readFile, rm, truncate } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, sep } from 'node:path';

/**
 * The file operations the journal and its lock use, and nothing more. Node's own by default; a test puts a
 * layer in between that fails the Nth write with ENOSPC, which is how a full disk is tested without mounts.
 */
export interface JournalFs {
  mkdir(path: string, options: { recursive: true; mode: number }): Promise<unknown>;
  open(path: string, flags: string | number, mode: number): Promise<JournalFileHandle>;
  readFile(path: string): Promise<Buffer>;
  readFileSync(path: string): Buffer;
  truncate(path: string, length: number): Promise<void>;
  rm(path: string, options: { force: true }): Promise<void>;
  openSync(path: string, flags: string, mode: number): number;
  writeSync(fd: number, text: string): number;
  closeSync(fd: number): void;
  linkSync(existing: string, path: string): void;
  renameSync(from: string, to: string): void;
  rmSync(path: string, options: { force: true }): void;
}

export interface JournalFileHandle {
  write(text: string): Promise<unknown>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

export const NODE_FS: JournalFs = {
  mkdir: (path, options) => mkdir(path, options),
  open: (path, flags, mode) => open(path, flags, mode),
  readFile: (path) => readFile(path),
  readFileSync: (path) => readFileSync(path),
  truncate: (path, length) => truncate(path, length),
  rm: (path, options) => rm(path, options),
  openSync: (path, flags, mode) => openSync(path, flags, mode),
  writeSync: (fd, text) => writeSync(fd, text),
  closeSync: (fd) => closeSync(fd),
  linkSync: (existing, path) => linkSync(existing, path),
  renameSync: (from, to) => renameSync(from, to),
  rmSync: (path, options) => rmSync(path, options),
};

// The errors that mean the state folder cannot take a write: the run must stop at once, saying so in words.
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EFBIG', 'ENOTDIR']);

/**
 * The journal or its lock could not be written. Stops a run at once (no answer is ever submitted before it is
 * journaled); the message names the folder and what to do, never a stack trace.
 */
export class StorageError extends Error {
  override name = 'StorageError';
  constructor(
    message: string,
    /** The system's error code (ENOSPC, EROFS, ...). */
    readonly code: string,
    readonly folder: string,
  ) {
    super(message);
  }
}

/** A write failure of the state folder as a StorageError; anything else as it was. */
export function asStorageError(error: unknown, path: string): Error {
  if (error instanceof StorageError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !STORAGE_CODES.has(code)) return error instanceof Error ? error : new Error(String(error));
  const folder = shownFolder(dirname(dirname(path)));
  return new StorageError(storageMessage(code, folder), code, folder);
}

/** The user's words for each failure; every one says that what was journaled is kept. */
export function storageMessage(code: string, folder: string): string {
  const kept = 'every answer journaled before it is kept, and nothing unjournaled was submitted';
  switch (code) {
    case 'ENOSPC':
    case 'EFBIG':
      return `The disk holding ${folder} is full: free some space and run again; ${kept}.`;
    case 'EDQUOT':
      return `Your disk quota for ${folder} is used up: free some space (or ask for a larger quota) and run again; ${kept}.`;
    case 'EROFS':
      return `${folder} is on a read-only file system: choose a writable state folder (--state-dir, or evalRunner.stateDir) and run again; ${kept}.`;
    case 'EACCES':
    case 'EPERM':
    case 'ENOTDIR':
      return `Eval Runner may not write in ${folder}: fix its permissions or choose another state folder (--state-dir, or evalRunner.stateDir), then run again; ${kept}.`;
    default:
      return `The disk holding ${folder} reported an input/output error (${code}): check the disk, then run again; ${kept}.`;
  }
}

/** A folder as people read it: the home directory as ~. */
function shownFolder(folder: string): string {
  const home = homedir();
  return home && (folder === home || folder.startsWith(home + sep)) ? `~${folder.slice(home.length)}` : folder;
}
