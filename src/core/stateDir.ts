import { homedir } from 'node:os';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { openJournal, parseJournal } from './journal';
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
