import { NODE_FS } from '../../../src/core/journal/storage';
import type { JournalFs } from '../../../src/core/journal/storage';

/** Where a write goes: a batch of journal lines, or the lock's file. */
export type WriteKind = 'journal' | 'lock';

/**
 * Node's file operations with a fault in between: `fails(kind, text)` sees each write before it happens and
 * says whether it fails with `code` (ENOSPC: a full disk). Once one write failed, every later one fails too,
 * as on a disk that stays full. A full disk without mounts.
 */
export function faultyFs(fails: (kind: WriteKind, text: string) => boolean, code = 'ENOSPC'): { fs: JournalFs; state: { failedWrites: number; writes: number } } {
  let full = false;
  const state = { failedWrites: 0, writes: 0 };
  const check = (kind: WriteKind, text: string) => {
    state.writes++;
    if (full || fails(kind, text)) {
      full = true;
      state.failedWrites++;
      throw Object.assign(new Error(`${code}: no space left on device, write`), { code, errno: -28, syscall: 'write' });
    }
  };
  const fs: JournalFs = {
    ...NODE_FS,
    open: async (path, flags, mode) => {
      const handle = await NODE_FS.open(path, flags, mode);
      return {
        write: async (text) => {
          check('journal', text);
          return handle.write(text);
        },
        datasync: () => handle.datasync(),
        close: () => handle.close(),
      };
    },
    writeSync: (fd, text) => {
      check('lock', text);
      return NODE_FS.writeSync(fd, text);
    },
  };
  return { fs, state };
}

/** Counts the journal lines of one record type (`"t":"answer"`) across writes; true once the Nth is in a write. */
export function atNth(type: string, n: number): (kind: WriteKind, text: string) => boolean {
  let seen = 0;
  return (kind, text) => {
    if (kind !== 'journal') return false;
    seen += text.split('\n').filter((line) => line.startsWith(`{"t":"${type}"`)).length;
    return seen >= n;
  };
}
