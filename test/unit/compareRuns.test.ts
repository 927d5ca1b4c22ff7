import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareRuns } from '../../src/core/report/compareRuns';
import { JournalText } from '../../src/core/journal/journalText';
import { TraceStore } from '../../src/core/store/traceStore';

/**
 * Compare Runs reads answer lines as bytes (their texts digested as written, never decoded) and parses the rest:
 * tricky texts must compare exactly as their decoded texts would, whichever way a line was read.
 */
describe('comparing two runs from the journal’s bytes', () => {
  const TRICKY = ['plain', 'quote " and \\" and \\\\', 'ends with a backslash \\', 'é 日本 🙂 \u0000 nul', '"a":"not the key"', 'x'.repeat(200_000)];

  it('finds the same and the differing answers for tricky texts, and reads each back exactly', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'eval-runner-compare-')), 'journal.jsonl');
    const ids = TRICKY.map((_, i) => `t${i}`);
    const lines: unknown[] = [{ t: 'run', at: 1, run: 'A' }];
    TRICKY.forEach((a, i) => lines.push({ t: 'answer', id: ids[i], a, at: 2, ms: i, run: 'A' }));
    lines.push({ t: 'run', at: 3, run: 'B' });
    // Run B: the same texts, except t1 (changed by one escaped character) and t3 (absent); t2's line is written with
    // its keys in another order (read whole), and t4's without its run (the run latest when it was written).
    TRICKY.forEach((a, i) => {
      if (i === 3) return;
      const text = i === 1 ? a.replace('\\"', '\\\\"') : a;
      if (i === 2) lines.push({ a: text, id: ids[i], t: 'answer', at: 4, run: 'B' });
      else if (i === 4) lines.push({ t: 'answer', id: ids[i], a: text, at: 4 });
      else lines.push({ t: 'answer', id: ids[i], a: text, at: 4, run: 'B' });
    });
    lines.push({ t: 'submitted', id: 't0', at: 5 });
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const store = new TraceStore();
    store.apply({ t: 'prompts', at: 1, items: ids.map((traceId) => ({ traceId, content: `prompt of ${traceId}` })) });
    const source = new JournalText(file);
    try {
      const rows = await compareRuns(file, store, source, 'A', 'B');
      assert.deepEqual(
        rows.map((r) => [r.traceId, r.differs]),
        [['t0', false], ['t1', true], ['t2', false], ['t3', true], ['t4', false], ['t5', false]],
      );
      rows.forEach((r, i) => assert.equal(r.a!.answer, TRICKY[i]));
      assert.equal(rows[3]!.b, undefined);
      assert.equal(rows[1]!.a!.latencyMs, 1);
      assert.equal(rows[2]!.b!.answer, TRICKY[2]);
    } finally {
      source.close();
    }
  });
});
