import assert from 'node:assert/strict';
import { isFastRecord, journalRecordSchema, parseLine } from '../../src/core/journal/journalRecords';

// The records a run writes most, as the journal writes them: the hand-checked fast path must take these, and must
// accept nothing the schema (the one definition) refuses, whatever a hand-edited or foreign line holds.
const VALID: Array<Record<string, unknown>> = [
  { t: 'answer', id: 'tr-1', a: 'an answer', at: 1 },
  { t: 'answer', id: 'tr-1', p: 'prompt', a: '', at: 1, ms: 12, ft: 3, tp: 4, tc: 5, err: true, na: false, by: 'user', run: 'r1' },
  { t: 'submitted', id: 'tr-1', at: 2 },
  { t: 'submitted', id: 'tr-1', at: 2, code: 'req_1' },
  { t: 'prompts', at: 3, items: [{ traceId: 'a', content: 'x' }, { traceId: 'b', content: '' }] },
  { t: 'prompts', at: 3, items: [] },
];
const ODD_VALUES: unknown[] = [undefined, null, '', 'text', 0, -1, 1.5, true, false, [], {}, ['x'], { traceId: 'a' }];

function* mutations(record: Record<string, unknown>): Generator<unknown> {
  const keys = [...Object.keys(record), 'extra', 'p', 'ms', 'by', 'code', 'items', 'rating'];
  for (const key of keys) {
    for (const value of ODD_VALUES) {
      const copy: Record<string, unknown> = { ...record };
      if (value === undefined) delete copy[key];
      else copy[key] = value;
      yield copy;
    }
  }
  if (Array.isArray(record.items)) {
    for (const value of ODD_VALUES) yield { ...record, items: [...(record.items as unknown[]), value] };
    for (const value of ODD_VALUES) yield { ...record, items: [{ traceId: value, content: 'x' }] };
  }
}

describe('journal records: one definition, and a fast path held to it', () => {
  it('takes the records a run writes through the fast path, and the schema agrees with each', () => {
    for (const record of VALID) {
      assert.equal(isFastRecord(record), true, JSON.stringify(record));
      assert.equal(journalRecordSchema.safeParse(record).success, true, JSON.stringify(record));
    }
  });

  it('accepts on the fast path nothing the schema refuses, over every field set to every odd value', () => {
    let tried = 0;
    let refused = 0;
    for (const record of VALID) {
      for (const candidate of mutations(record)) {
        tried++;
        const schemaSays = journalRecordSchema.safeParse(candidate).success;
        if (!schemaSays) refused++;
        if (isFastRecord(candidate)) assert.equal(schemaSays, true, `the fast path took ${JSON.stringify(candidate)}, which the schema refuses`);
        // A line is read as the schema reads it, whichever path takes it.
        assert.equal(parseLine(JSON.stringify(candidate)) !== undefined, schemaSays, JSON.stringify(candidate));
      }
    }
    assert.ok(tried > 500 && refused > 100, `${tried} candidates, ${refused} refused`);
  });
});
