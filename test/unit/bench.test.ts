import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(__dirname, '..', '..', '..');

type Row = { names: string[] };
type TableLine = [row: string, what: string, value: unknown, target: string, met?: boolean];

// npm run bench is one file per row (scripts/bench/); its table is written apart (table.mjs), so a line naming a row
// that is not there (a typo, a row renamed) would never be printed, and --only= would take the name without a word.
describe('npm run bench: its rows and its table', () => {
  it('names each row once, and every line of the table after a row the bench runs', async () => {
    const { ROWS } = (await import(pathToFileURL(join(ROOT, 'scripts', 'bench', 'rows.mjs')).href)) as { ROWS: Row[] };
    const { tableLines } = (await import(pathToFileURL(join(ROOT, 'scripts', 'bench', 'table.mjs')).href)) as { tableLines: (figures: object) => TableLine[] };
    const names = ROWS.flatMap((r) => r.names);
    assert.deepEqual(names, [...new Set(names)]);
    const orphans = tableLines({}).map(([row]) => row).filter((row) => !names.includes(row));
    assert.deepEqual(orphans, []);
  });
});
