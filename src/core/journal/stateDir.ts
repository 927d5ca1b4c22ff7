import { createReadStream } from 'node:fs';
import { homedir } from 'node:os';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { createInterface } from 'node:readline';
import type { EvaluationKind } from '../../api/evaluationKinds';
import { journalPath, openJournal, parseJournal } from './journal';
import { parseLine } from './journalRecords';
import type { JournalRecord } from './journalRecords';

/**
 * Where journals live unless the user says otherwise (--state-dir, evalRunner.stateDir): one folder for the
 * CLI and the editor, so a CI run shows in the sidebar and the lock keeps the two from running one
 * evaluation at once. The platform's usual per-user state folder.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home = homedir()): string {
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'eval-runner');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'eval-runner');
  return join(env.XDG_STATE_HOME || join(home, '.local', 'state'), 'eval-runner');
}

/**
 * Moves the journals an older editor kept in its own storage into the shared state folder, once. A journal
 * already there (the CLI ran the same evaluation) is merged record by record in time order, under its lock;
 * prompts kept beside an old journal become its prompts record. Returns the journals moved.
 */
export async function migrateJournals(fromDir: string, toDir: string): Promise<number> {
  const files = await journalFiles(fromDir);
  let moved = 0;
  for (const file of files) {
    const dest = join(toDir, relative(fromDir, file));
    const records = parseJournal(await readFile(file, 'utf8')).records;
    const side = file.replace(/\.jsonl$/, '.prompts.json');
    const prompts = await readFile(side, 'utf8').then((t) => JSON.parse(t) as Array<{ traceId: string; content: string }>, () => undefined);
    if (prompts && !records.some((r) => r.t === 'prompts')) records.unshift({ t: 'prompts', at: 0, items: prompts });
    await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
    const { journal, replay } = await openJournal(dest);
    try {
      // Stable by time: each file's own order is kept where times tie.
      const merged: JournalRecord[] = [...records, ...replay.records].map((r, i) => ({ r, i })).sort((a, b) => a.r.at - b.r.at || a.i - b.i).map((x) => x.r);
      const tmp = `${dest}.${process.pid}.migrate`;
      await writeFile(tmp, merged.map((r) => `${JSON.stringify(r)}\n`).join(''), { mode: 0o600 });
      await rename(tmp, dest);
    } finally {
      await journal.close();
    }
    await rm(file, { force: true });
    await rm(side, { force: true });
    moved++;
  }
  return moved;
}

async function journalFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries.filter((e) => e.isFile() && e.name.endsWith('.jsonl')).map((e) => join(e.parentPath ?? e.path, e.name));
}

/**
 * The editor's local sandbox, named in its journals' key where a service's origin is: it listens on whichever
 * port is free, and its runs, verdicts and comparisons stay one history whatever the port (the URL it is reached
 * at is the run's base URL, never part of the key).
 */
export const SANDBOX_ORIGIN = 'sandbox';

/** A journal found in a state folder: whose evaluation it is, and where. */
export interface JournalEntry {
  kind: EvaluationKind;
  evaluationId: number;
  /** The service's origin; when no record names it and the folder's name cannot be read back, that name. */
  origin: string;
  path: string;
}

const JOURNAL_NAME = /^(benchmark|robustness)-(\d+)\.jsonl$/;

/**
 * The journals a state folder holds (see journalPath), sorted: what a command that found no journal for the
 * evaluation it was given can offer instead, so a mistyped base URL, id or kind shows itself.
 */
export async function listJournals(stateDir: string): Promise<JournalEntry[]> {
  const found: JournalEntry[] = [];
  for (const path of await journalFiles(stateDir)) {
    const match = JOURNAL_NAME.exec(basename(path));
    // An empty journal is one a run opened and never wrote to (a wrong kind, a refused token): nothing to name.
    if (!match || relative(stateDir, path).split(sep).length !== 2 || (await stat(path).then((s) => s.size, () => 0)) === 0) continue;
    const key = { kind: match[1] as EvaluationKind, evaluationId: Number(match[2]) };
    const origin = originFromFolder(path, key) ?? (await originFromRecords(path, key)) ?? basename(dirname(path));
    found.push({ ...key, origin, path });
  }
  const order = (j: JournalEntry) => [j.origin, j.kind, String(j.evaluationId).padStart(12, '0')].join('\n');
  return found.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

/** The origin whose folder name this is (host_port-hash), when the name can be read back: checked by its hash. */
function originFromFolder(path: string, key: Omit<JournalEntry, 'origin' | 'path'>): string | undefined {
  const readable = basename(dirname(path)).replace(/-[0-9a-f]{8}$/, '');
  const hosts = [readable, readable.replace(/_(\d+)$/, ':$1')];
  const candidates = [SANDBOX_ORIGIN, ...hosts.flatMap((host) => [`http://${host}`, `https://${host}`])];
  return candidates.find((origin) => journalPath(dirname(dirname(path)), { ...key, origin }) === path);
}

/** The origin a run record names (an IPv6 or otherwise unreadable folder name), reading only until it is found. */
async function originFromRecords(path: string, key: Omit<JournalEntry, 'origin' | 'path'>): Promise<string | undefined> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line.includes('"origin"')) continue;
      const record = parseLine(line);
      const origin = record?.t === 'run' ? record.origin : undefined;
      if (origin && journalPath(dirname(dirname(path)), { ...key, origin }) === path) return origin;
    }
  } catch {
    // An unreadable journal is still listed, by its folder's name.
  } finally {
    lines.close();
  }
  return undefined;
}
