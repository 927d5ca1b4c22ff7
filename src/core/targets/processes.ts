import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

/**
 * Process handling that works the same on Windows, macOS and Linux: a shell command through the platform's
 * shell, and the end of a whole process tree (a worker's children die with it).
 */

/** How the platform's shell runs a command line: /bin/sh -c on POSIX, %ComSpec% /d /s /c on Windows. */
export function shellInvocation(command: string, platform = process.platform, env: NodeJS.ProcessEnv = process.env): { file: string; args: string[]; verbatim: boolean } {
  if (platform === 'win32') {
    // cmd.exe parses its own command line: quoted whole after /s /c, passed verbatim so Node adds no escaping.
    return { file: env.ComSpec || env.COMSPEC || 'cmd.exe', args: ['/d', '/s', '/c', `"${command}"`], verbatim: true };
  }
  return { file: '/bin/sh', args: ['-c', command], verbatim: false };
}

/**
 * Spawn options that let killTree end the child and its descendants: on POSIX the child leads a process group
 * of its own (a negative pid signals the group); on Windows taskkill /T walks the tree, and detached would open
 * a console window.
 */
export function treeSpawnOptions(platform = process.platform): { detached: boolean; windowsHide: boolean } {
  return { detached: platform !== 'win32', windowsHide: true };
}

/**
 * Ends a child and every process it started. Safe to call twice, or after the child exited: on POSIX its process
 * group outlives it while a descendant is alive (a worker that crashed after starting a helper), so the group is
 * signalled whatever the child's own state; a group with no member left is simply not there (ESRCH).
 */
export function killTree(child: ChildProcess, platform = process.platform): void {
  const pid = child.pid;
  const exited = child.exitCode !== null || child.signalCode !== null;
  if (pid === undefined) return;
  if (platform === 'win32') {
    // /T: the whole tree, /F: at once. Synchronous so that close() has ended them when it returns. Windows keeps
    // no tree for a parent that is gone: an exited child's descendants cannot be found from it.
    if (!exited) spawnSync('taskkill', ['/pid', String(pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' });
    return;
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    if (!exited) child.kill('SIGKILL');
  }
}

/**
 * Splits a command line into the program and its arguments, without a shell: words separated by spaces,
 * "double" or 'single' quotes group, a backslash escapes the next character outside single quotes (on
 * Windows a backslash is a path separator and stays). The worker target spawns the program directly.
 */
export function splitCommandLine(line: string, platform = process.platform): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && platform !== 'win32' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && platform !== 'win32' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new TypeError(`The command line has an unclosed ${quote} quote.`);
  if (inWord) words.push(word);
  return words;
}

