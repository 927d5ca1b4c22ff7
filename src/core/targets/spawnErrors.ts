import { accessSync, constants, statSync } from 'node:fs';
import { delimiter as hostDelimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * Words for a process that could not start. Node says `spawn python9 ENOENT`; a user needs to hear that python9 was
 * not found and where it was looked for (each folder of PATH, or the path given), that a file is not executable, or
 * that the system refused. Used by the command, python and worker targets, and by the editor's runner.
 */

export interface SpawnPlace {
  /** The folder the process was to start in (a missing one is also ENOENT). */
  cwd?: string;
  /** The environment it was given (its PATH is the one searched). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

// A PATH of many folders is named up to this many; the rest are counted.
const NAMED_FOLDERS = 12;

/** What went wrong starting `program`, in words, with what to do; the error's own message for other codes. */
export function spawnErrorText(error: unknown, program: string, place: SpawnPlace = {}): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const platform = place.platform ?? process.platform;
  switch (code) {
    case 'ENOENT':
      return notFoundText(program, place, platform);
    case 'EACCES':
      return `${whereIs(program, place, platform)} is not executable (permission denied): give it execute permission (chmod +x), or name its interpreter first.`;
    case 'EPERM':
      return `the system did not permit starting ${whereIs(program, place, platform)} (operation not permitted): a security policy or the file's attributes refuse it.`;
    default:
      return message;
  }
}

/**
 * A command line whose shell exited 127: POSIX shells' "command not found". Where the shell looked, for the tail of
 * its stderr that names the program.
 */
export function shellNotFoundText(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  return `the shell found no program by the name it was given, in the path given or in any folder of PATH (${foldersText(pathFolders(env, platform))})`;
}

function foldersText(folders: readonly string[]): string {
  if (!folders.length) return 'PATH is empty';
  const more = folders.length > NAMED_FOLDERS ? ` and ${folders.length - NAMED_FOLDERS} more` : '';
  return `${folders.slice(0, NAMED_FOLDERS).join(', ')}${more}`;
}

function notFoundText(program: string, place: SpawnPlace, platform: NodeJS.Platform): string {
  // Node says ENOENT for a working folder that is not there, naming the program it never got to start.
  if (place.cwd && !isFolder(place.cwd)) return `the folder ${place.cwd} to start ${program} in does not exist.`;
  if (hasFolder(program, platform)) {
    const full = place.cwd && !isAbsolute(program) ? resolve(place.cwd, program) : program;
    return `${program} was not found: there is no file ${full}.`;
  }
  const folders = pathFolders(place.env ?? process.env, platform);
  if (!folders.length) return `${program} was not found: PATH is empty, so no folder was looked in. Give its full path.`;
  return `${program} was not found in any folder of PATH (${foldersText(folders)}). Install it, or give its full path.`;
}

/** The program's file: the path given, or the first folder of PATH that holds it. */
function whereIs(program: string, place: SpawnPlace, platform: NodeJS.Platform): string {
  if (hasFolder(program, platform)) return place.cwd && !isAbsolute(program) ? resolve(place.cwd, program) : program;
  for (const folder of pathFolders(place.env ?? process.env, platform)) {
    const file = join(folder, program);
    if (exists(file)) return file;
  }
  return program;
}

/** The folders of PATH, in order (Windows spells it Path, and separates with ;). */
export function pathFolders(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] {
  const key = platform === 'win32' ? Object.keys(env).find((k) => k.toUpperCase() === 'PATH') : 'PATH';
  const value = key ? env[key] : undefined;
  const delimiter = platform === 'win32' ? ';' : platform === process.platform ? hostDelimiter : ':';
  return (value ?? '').split(delimiter).filter(Boolean);
}

function hasFolder(program: string, platform: NodeJS.Platform): boolean {
  return program.includes('/') || (platform === 'win32' && program.includes('\\'));
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    accessSync(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}
