// Restricted Mode (an untrusted workspace): the user's own code (python, worker and command targets) may run, but
// nothing of the workspace may: not a file in it, not an interpreter it chose, not with it as the working folder.
// One decision, pure (paths in, a verdict out), so that every way to a run asks it and the tests can give it
// Windows and macOS paths as data. The editor gathers the paths (src/extension/ctx.ts, targetPlan).
import { posix, win32 } from 'node:path';
import type { TargetSpec } from './kinds/specs';
import { splitCommandLine } from './processes';

export interface OwnCodePlaces {
  spec: TargetSpec;
  trusted: boolean;
  /** The workspace's folders, absolute; the first is where a relative path in the settings was meant to be. */
  folders: readonly string[];
  /** A python target's interpreter when its spec names none: the editor's Python environment, and whether a workspace setting chose it. */
  interpreter?: { path: string; byWorkspace: boolean };
  /** Working folders for Restricted Mode, in order of preference after the program's own (the home folder, the editor's storage). */
  fallbacks: readonly string[];
  platform?: NodeJS.Platform;
  /** Where a path really is (symlinks followed); the path itself when it does not exist. Left out: paths as given. */
  realpath?: (path: string) => string;
}

/** What was refused: a file or program, an interpreter, an interpreter a workspace setting chose, or any working folder. */
export type OwnCodeRefusal = 'file' | 'interpreter' | 'workspaceInterpreter' | 'workingFolder';

export type OwnCodeVerdict =
  | { ok: true; spec: TargetSpec; cwd: string | undefined }
  | { ok: false; refused: OwnCodeRefusal; path: string; relative: boolean };

const paths = (platform: NodeJS.Platform) => (platform === 'win32' ? win32 : posix);

/**
 * Whether a path lies in a folder (or is it). Windows compares drive letters and names without case, and so does
 * macOS, whose disks are case-insensitive by default (refusing more, never less, on a case-sensitive one).
 */
export function isInside(folder: string, path: string, platform: NodeJS.Platform = process.platform): boolean {
  const p = paths(platform);
  const fold = (s: string) => (platform === 'win32' || platform === 'darwin' ? s.toLowerCase() : s);
  const rel = p.relative(fold(p.normalize(folder)), fold(p.normalize(path)));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${p.sep}`) && !p.isAbsolute(rel));
}

/**
 * Where the target's own code may run: the spec as it will run (a python file made absolute, the interpreter filled
 * in) and its working folder, or what was refused. Trusted: the workspace is the working folder, as it always was.
 */
export function ownCodeVerdict(places: OwnCodePlaces): OwnCodeVerdict {
  const { spec, trusted, folders } = places;
  const platform = places.platform ?? process.platform;
  const p = paths(platform);
  // A relative path in the settings was written for the workspace (the working folder before Restricted Mode had its rule).
  const base = folders[0] ?? places.fallbacks[0] ?? '';
  const real = places.realpath ?? ((x: string) => x);
  const inWorkspace = (path: string) => folders.some((f) => [f, real(f)].some((folder) => [path, real(path)].some((x) => isInside(folder, x, platform))));
  const related = (dir: string) => inWorkspace(dir) || folders.some((f) => [f, real(f)].some((folder) => [dir, real(dir)].some((x) => isInside(x, folder, platform))));
  const refused = (what: OwnCodeRefusal, path: string, relative = false): OwnCodeVerdict => ({ ok: false, refused: what, path, relative });
  if (spec.type === 'python') {
    const file = p.isAbsolute(spec.file) ? spec.file : p.resolve(base, spec.file);
    const python = spec.python ?? places.interpreter?.path;
    const runs = { ...spec, file, ...(python ? { python } : {}) };
    if (trusted) return { ok: true, spec: runs, cwd: folders[0] };
    if (inWorkspace(file)) return refused('file', file, !p.isAbsolute(spec.file));
    if (!spec.python && places.interpreter?.byWorkspace) return refused('workspaceInterpreter', places.interpreter.path);
    const exe = python && pathLike(python, platform) ? p.resolve(base, python) : undefined;
    if (exe && inWorkspace(exe)) return refused('interpreter', exe, !p.isAbsolute(python!));
    const cwd = [p.dirname(file), ...places.fallbacks].find((dir) => !related(dir));
    return cwd ? { ok: true, spec: runs, cwd } : refused('workingFolder', p.dirname(file));
  }
  if (spec.type !== 'worker' && spec.type !== 'command') return { ok: true, spec, cwd: undefined };
  if (trusted) return { ok: true, spec, cwd: folders[0] };
  const words = commandWords(spec.command, platform);
  for (const word of words.map((w) => argumentPath(w)).filter((w) => pathLike(w, platform))) {
    const path = p.isAbsolute(word) ? word : p.resolve(base, word);
    if (inWorkspace(path)) return refused('file', path, !p.isAbsolute(word));
  }
  // A worker's program given by its path may start in its own folder; a shell command starts in a fallback.
  const program = spec.type === 'worker' && words[0] && p.isAbsolute(words[0]) ? [p.dirname(words[0])] : [];
  const cwd = [...program, ...places.fallbacks].find((dir) => !related(dir));
  return cwd ? { ok: true, spec, cwd } : refused('workingFolder', places.fallbacks[0] ?? base);
}

/** The words of a command line, as the worker's split gives them; a shell command's too (an unclosed quote: by spaces). */
function commandWords(command: string, platform: NodeJS.Platform): string[] {
  try {
    return splitCommandLine(command, platform);
  } catch {
    return command.split(/\s+/).filter(Boolean);
  }
}

/** The path in an argument: the value of --name=value, the file of a shell redirection (2>/dev/null), the word otherwise. */
function argumentPath(word: string): string {
  const eq = word.indexOf('=');
  return word.startsWith('-') && eq > 0 ? word.slice(eq + 1) : word.replace(/^\d*[<>]+&?/, '');
}

/**
 * Whether a word names a file by its path (absolute, or with a folder, or starting with a dot), not a program looked up
 * on PATH or a plain argument. URLs are not paths.
 */
function pathLike(word: string, platform: NodeJS.Platform): boolean {
  if (word === '' || word.includes('://')) return false;
  return paths(platform).isAbsolute(word) || word.startsWith('.') || word.includes('/') || (platform === 'win32' && word.includes('\\'));
}

/**
 * A worker command as it is stored when chosen: each word naming a file of the folder it was chosen in by a relative
 * path (./worker, src/w.py, or w.py when that file is there) is given its full path, so that the setting means that
 * file wherever it runs. Unchanged when no word is such a path.
 */
export function absoluteCommand(command: string, base: string, exists: (path: string) => boolean, platform: NodeJS.Platform = process.platform): string {
  const p = paths(platform);
  const words = commandWords(command, platform);
  const full = words.map((word) => {
    if (word.startsWith('-') || word.includes('://') || p.isAbsolute(word)) return word;
    const path = p.resolve(base, word);
    return pathLike(word, platform) || exists(path) ? path : word;
  });
  if (full.every((word, i) => word === words[i])) return command;
  // Quoted as splitCommandLine reads them back: Windows has no escapes inside quotes; POSIX escapes " and \ there.
  const quote = (word: string) =>
    platform === 'win32' ? (/\s/.test(word) ? `"${word}"` : word) : /[\s"'\\]/.test(word) ? `"${word.replace(/(["\\])/g, '\\$1')}"` : word;
  return full.map(quote).join(' ');
}
