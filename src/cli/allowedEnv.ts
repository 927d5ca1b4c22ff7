// A variable named by a file (a curl file, a config file: perhaps a cloned repository's) is sent only once the
// person running the CLI allows it: asked once at a terminal and remembered per file content and origin, or
// --allow-env NAME on the command line (CI). The answers live in the user's own config folder, never in the
// state folder, which a config file can choose.
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { boundOrigin } from '../core';
import { allowedByFlag } from './envAllowance';
import { UsageError } from './exitCodes';
import { safeText } from './terminalText';
import { useLines } from './secretUses';
import type { NamingFile, SecretUse } from './secretUses';

/** The user's own config folder: $XDG_CONFIG_HOME/eval-runner, else the platform's usual per-user one. */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home = homedir()): string {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'eval-runner');
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'eval-runner');
  if (platform === 'darwin') return join(home, 'Library', 'Preferences', 'eval-runner');
  return join(home, '.config', 'eval-runner');
}

/** One yes, remembered: this file's content may send its variables to this origin. */
interface Approval {
  sha256: string;
  origin: string;
  /** For people reading the file: where it was, and what it named. */
  file: string;
  variables: string[];
  at: string;
}

/** The remembered answers: an owner-only JSON file. */
export class ApprovalStore {
  constructor(readonly path: string = join(userConfigDir(), 'allowed-env.json')) {}

  /** A yes for this content and origin that covered each of `variables`: a yes for a file's key is not one for the token. */
  has(sha256: string, origin: string, variables: readonly string[] = []): boolean {
    return this.read().some((a) => a.sha256 === sha256 && a.origin === origin && variables.every((v) => a.variables.includes(v)));
  }

  add(approval: Omit<Approval, 'at'>): void {
    const same = (a: Approval) => a.sha256 === approval.sha256 && a.origin === approval.origin;
    // One entry per content and origin, holding every variable said yes to there.
    const before = this.read().find(same)?.variables ?? [];
    const variables = [...new Set([...before, ...approval.variables])];
    const all = [...this.read().filter((a) => !same(a)), { ...approval, variables, at: new Date().toISOString() }];
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      renameSync(tmp, this.path);
    } catch (error) {
      rmSync(tmp, { force: true });
      throw error;
    }
    if (process.platform !== 'win32') chmodSync(this.path, 0o600);
  }

  /** The answers; none from a file another user could have written (not ours, or writable by others). */
  private read(): Approval[] {
    try {
      const stat = lstatSync(this.path);
      if (!stat.isFile()) return [];
      if (process.platform !== 'win32' && (stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0)) return [];
      const value = JSON.parse(readFileSync(this.path, 'utf8')) as unknown;
      return Array.isArray(value) ? (value as Approval[]).filter((a) => typeof a?.sha256 === 'string' && typeof a.origin === 'string' && Array.isArray(a.variables)) : [];
    } catch {
      return [];
    }
  }
}

/** Asks the person at the terminal a yes/no question; true only for a yes. */
export type Asker = (question: string) => Promise<boolean>;

/** The question on stderr, the answer from stdin: for a terminal (both TTYs) only. */
export function terminalAsker(input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Asker | undefined {
  if (!input.isTTY || !output.isTTY) return undefined;
  return (question) =>
    new Promise((resolve) => {
      const rl = createInterface({ input, output });
      rl.on('close', () => resolve(false));
      rl.question(question, (answer) => {
        resolve(/^\s*y(es)?\s*$/i.test(answer));
        rl.close();
      });
    });
}

export interface ApprovalOptions {
  /** --allow-env NAME or NAME=ORIGIN, from the command line itself (envAllowance.ts). */
  allowEnv: readonly string[];
  store: ApprovalStore;
  /** undefined: no terminal to ask at (CI). */
  ask?: Asker;
}

/**
 * Each file's variables are allowed, or the run stops (exit 2) before anything is sent. A file's variable is one
 * it names, or one the command line names whose origin the file chose. Allowed: named on the command line with
 * the origin given there too (no file), by --allow-env NAME or NAME=this origin, a variable bound to this very
 * origin (its provider's key, going to its provider), or a yes remembered for this file's content and origin.
 */
export async function approveFileUses(uses: readonly SecretUse[], origin: string, options: ApprovalOptions): Promise<void> {
  const sending = (u: SecretUse) => `${u.file!.flag} ${u.file!.path} would send it to`;
  const pending = uses.filter((u) => u.file && boundOrigin(u.variable) !== origin && !allowedByFlag(options.allowEnv, u.variable, origin, sending(u)));
  const files = [...new Map(pending.map((u) => [`${u.file!.flag} ${u.file!.sha256}`, u.file!])).values()];
  for (const file of files) {
    const named = pending.filter((u) => u.file!.flag === file.flag && u.file!.sha256 === file.sha256);
    const variables = [...new Set(named.map((u) => u.variable))];
    const lines = useLines(named, origin).map((line) => `  ${line}\n`).join('');
    // The origin-bound form: what CI copies cannot be moved by a later edit of the file.
    const allow = variables.map((v) => `--allow-env ${v}=${origin}`).join(' ');
    await approveFile({ file, origin, variables }, options, {
      said: `${file.flag} ${file.path} ${whatFileDoes(named)}:\n${lines}`,
      noTerminal: `A variable ${named.some((u) => u.originOnly) ? 'sent where a file chose' : 'named by a file'} is sent only once you allow it. With no terminal to ask at, add ${allow} to the command line if you trust this file.`,
      question: `Send ${variables.length === 1 ? 'it' : 'them'} to ${origin}?`,
      otherwise: `add ${allow} to the command line`,
    });
  }
}

/** What the file does with these variables: names them, or chooses where those the command line named go. */
function whatFileDoes(uses: readonly SecretUse[]): string {
  const list = (xs: SecretUse[]) => [...new Set(xs.map((u) => u.variable))];
  const byFile = list(uses.filter((u) => !u.originOnly));
  const byFlag = list(uses.filter((u) => u.originOnly));
  const one = (xs: string[]) => xs.length === 1;
  const names = byFile.length ? `names ${one(byFile) ? 'the variable' : 'variables'} ${byFile.join(', ')}, whose ${one(byFile) ? 'value' : 'values'} it would send` : '';
  const chooses = byFlag.length ? `chooses the origin that ${byFlag.join(', ')} (named on the command line) ${one(byFlag) ? 'is' : 'are'} sent to` : '';
  return [names, chooses].filter(Boolean).join(', and ');
}

/** What a file would send where, and the words around the question. */
export interface FileRequest {
  file: NamingFile;
  origin: string;
  variables: string[];
}

export interface RequestWords {
  /** What the file would send, and where, ending with a newline. */
  said: string;
  /** Why it stops with no terminal, and the flag to add. */
  noTerminal: string;
  question: string;
  /** The way on after a no, completing "Allow it at the question, or …". */
  otherwise: string;
}

/**
 * The one way a file gets to send a secret: a yes remembered for its content and origin, else asked at a terminal
 * (a yes remembered), else refused with words (exit 2). Nothing is sent before this returns.
 */
export async function approveFile(request: FileRequest, options: ApprovalOptions, words: RequestWords): Promise<void> {
  const { file, origin, variables } = request;
  if (options.store.has(file.sha256, origin, variables)) return;
  if (!options.ask) throw new UsageError(`${words.said}${words.noTerminal} Nothing was sent.`);
  // The words hold a file's names (a header's, a query parameter's): made safe so a file cannot redraw the question.
  const yes = await options.ask(safeText(`${words.said}${words.question} Allow only a file you trust; the answer is remembered for this file's content and this origin. [y/N] `));
  if (!yes) throw new UsageError(`Not allowed: nothing was sent. Allow it at the question, or ${words.otherwise}.`);
  options.store.add({ sha256: file.sha256, origin, file: file.path, variables });
}
