import assert from 'node:assert/strict';
import { ListLimitError, ListParser, ListSyntaxError } from '../../src/api/listParser';
import type { ListEnvelope } from '../../src/api/listParser';
import type { PromptItem } from '../../src/api/schemas';

/** A seeded generator (mulberry32): a failure names its seed, and the same seed replays it. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = ['a', 'Z', ' ', '"', '\\', '/', '\n', '\t', '\0', '\u001f', 'é', 'ß', '€', '中', '😀', '\u{10ffff}', '\ud800', '\udfff', '\u2028', '{', '}', '[', ']', ':', ','];

function randomString(r: () => number, max = 12): string {
  let s = '';
  const n = Math.floor(r() * max);
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)]!;
  return s;
}

function randomValue(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 5 : 7));
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -1, 1.5, 1e21, -2.5e-7, 12345678901234567890][Math.floor(r() * 6)];
    case 3:
    case 4:
      return randomString(r);
    case 5:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => [randomString(r, 6), randomValue(r, depth + 1)]));
  }
}

function randomItem(r: () => number): unknown {
  const x = r();
  if (x < 0.02) return randomValue(r, 2);
  const item: Record<string, unknown> = {};
  const fields: Array<[string, () => unknown]> = [
    ['traceId', () => (r() < 0.02 ? randomValue(r, 3) : r() < 0.01 ? '' : `t${Math.floor(r() * 1e6)}${randomString(r, 4)}`)],
    ['content', () => (r() < 0.02 ? randomValue(r, 3) : randomString(r, r() < 0.05 ? 2000 : 40))],
    ['extra', () => randomValue(r, 2)],
    ['traceId2', () => randomValue(r, 2)],
  ];
  for (const [key, make] of fields.sort(() => r() - 0.5)) if (r() < 0.97 || key.length > 7) item[key] = make();
  return item;
}

function randomEnvelope(r: () => number): unknown {
  if (r() < 0.03) return randomValue(r, 0);
  const fields: Array<[string, () => unknown]> = [
    ['code', () => (r() < 0.8 ? `req_${Math.floor(r() * 1e9)}` : randomValue(r, 1))],
    ['message', () => (r() < 0.8 ? randomString(r, 30) : randomValue(r, 1))],
    ['data', () => (r() < 0.85 ? Array.from({ length: Math.floor(r() * 30) }, () => randomItem(r)) : randomValue(r, 1))],
    ['success', () => (r() < 0.9 ? r() < 0.8 : randomValue(r, 1))],
    ['extra', () => randomValue(r, 1)],
  ];
  const out: Record<string, unknown> = {};
  for (const [key, make] of fields.sort(() => r() - 0.5)) if (r() < 0.93) out[key] = make();
  return out;
}

/** JSON text of a value with random whitespace and random (valid) escapes: what another service might send. */
function serialise(value: unknown, r: () => number): string {
  const ws = () => (r() < 0.2 ? [' ', '\n', '\t', '\r\n  '][Math.floor(r() * 4)]! : '');
  const str = (s: string) => {
    let out = '"';
    for (const ch of s) {
      const code = ch.codePointAt(0)!;
      if (r() < 0.15) {
        // \uXXXX, astral characters as their surrogate pair
        const units = code > 0xffff ? [0xd800 + ((code - 0x10000) >> 10), 0xdc00 + ((code - 0x10000) & 0x3ff)] : [code];
        out += units.map((u) => `\\u${u.toString(16).padStart(4, '0')}`).join('');
      } else if (ch === '/' && r() < 0.5) out += '\\/';
      else out += JSON.stringify(ch).slice(1, -1);
    }
    return `${out}"`;
  };
  const walk = (v: unknown): string => {
    if (v === null || typeof v !== 'object') return typeof v === 'string' ? str(v) : JSON.stringify(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${ws()}${walk(x)}${ws()}`).join(',')}${ws()}]`;
    return `{${ws()}${Object.entries(v).map(([k, x]) => `${ws()}${str(k)}${ws()}:${ws()}${walk(x)}${ws()}`).join(',')}${ws()}}`;
  };
  return `${ws()}${walk(value)}${ws()}`;
}

/** What the envelope means, from JSON.parse's value: the oracle. */
function expected(value: unknown): { envelope: Partial<ListEnvelope>; items: PromptItem[] } {
  const items: PromptItem[] = [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { envelope: { isObject: false }, items };
  const v = value as Record<string, unknown>;
  const scalar = (x: unknown) => (x !== null && typeof x === 'object' ? undefined : x);
  const data = v.data;
  let dataIssue: string | undefined;
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i++) {
      const item = data[i] as Record<string, unknown> | null;
      if (item === null || typeof item !== 'object' || Array.isArray(item)) dataIssue = `item ${i}: expected object`;
      else if (typeof item.traceId !== 'string') dataIssue = `item ${i}: traceId: expected string`;
      else if (typeof item.content !== 'string') dataIssue = `item ${i}: content: expected string`;
      else if (item.traceId === '') dataIssue = `item ${i}: traceId: empty`;
      else items.push({ traceId: item.traceId, content: item.content });
      if (dataIssue) break;
    }
  }
  return {
    envelope: {
      isObject: true,
      code: scalar(v.code),
      message: scalar(v.message),
      success: scalar(v.success),
      data: !('data' in v) ? 'absent' : data === null ? 'null' : Array.isArray(data) ? 'array' : 'other',
      dataIssue,
      items: items.length,
    },
    items,
  };
}

/** Parses bytes split at the given cut points; the envelope and every item handed on, or the error thrown. */
function parseSplit(bytes: Buffer, cuts: number[], options = { maxItemBytes: 16 * 1024 * 1024, batchItems: 7, batchChars: 3000 }) {
  const parser = new ListParser(options);
  const items: PromptItem[] = [];
  const batchSizes: number[] = [];
  try {
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      parser.write(bytes.subarray(at, cut));
      at = cut;
      for (const b of parser.takeBatches()) {
        batchSizes.push(b.length);
        items.push(...b);
      }
    }
    const envelope = parser.end();
    for (const b of parser.takeBatches()) items.push(...b);
    return { envelope, items, batchSizes };
  } catch (error) {
    return { error, items };
  }
}

function randomCuts(r: () => number, length: number): number[] {
  const n = Math.floor(r() * 12);
  return Array.from({ length: n }, () => Math.floor(r() * (length + 1))).sort((a, b) => a - b);
}

function mutate(text: Buffer, r: () => number): Buffer {
  const at = Math.floor(r() * text.length);
  const choice = r();
  if (choice < 0.3) return text.subarray(0, at);
  if (choice < 0.6) return Buffer.concat([text.subarray(0, at), text.subarray(at + 1)]);
  const junk = Buffer.from([[0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x00, 0x1f, 0x0a, 0x31, 0x6e, 0x65, 0x2e, 0xc3, 0x20, 0x75][Math.floor(r() * 18)]!]);
  return Buffer.concat([text.subarray(0, at), junk, text.subarray(at)]);
}

describe('the prompt list parser reads as JSON.parse does, split anywhere', function () {
  this.timeout(120_000);

  it('agrees with JSON.parse on 1,500 random envelopes, each cut at random byte boundaries', () => {
    for (let seed = 1; seed <= 1500; seed++) {
      const r = rng(seed);
      const text = Buffer.from(serialise(randomEnvelope(r), r));
      const want = expected(JSON.parse(text.toString('utf8')));
      const got = parseSplit(text, randomCuts(r, text.length));
      assert.ok(!('error' in got), `seed ${seed}: ${String((got as { error?: unknown }).error)}`);
      for (const [k, v] of Object.entries(want.envelope)) assert.deepEqual((got.envelope as unknown as Record<string, unknown>)[k], v, `seed ${seed}: ${k}`);
      assert.deepEqual(got.items, want.items, `seed ${seed}: items`);
    }
  });

  it('refuses what JSON.parse refuses, and reads what it reads, in 3,000 damaged envelopes', () => {
    let refused = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed * 7919);
      const good = Buffer.from(serialise(randomEnvelope(r), r));
      const bad = mutate(good, r);
      let value: unknown;
      let parseable = true;
      try {
        value = JSON.parse(bad.toString('utf8'));
      } catch {
        parseable = false;
      }
      const got = parseSplit(bad, randomCuts(r, bad.length));
      if (!parseable) {
        refused++;
        assert.ok('error' in got && got.error instanceof ListSyntaxError, `seed ${seed}: ${bad.toString('utf8').slice(0, 300)} was read: ${JSON.stringify((got as { envelope?: unknown }).envelope)}`);
        continue;
      }
      assert.ok(!('error' in got), `seed ${seed}: ${String((got as { error?: unknown }).error)} on ${bad.toString('utf8').slice(0, 300)}`);
      const want = expected(value);
      for (const [k, v] of Object.entries(want.envelope)) assert.deepEqual((got.envelope as unknown as Record<string, unknown>)[k], v, `seed ${seed}: ${k}`);
      assert.deepEqual(got.items, want.items, `seed ${seed}: items`);
    }
    assert.ok(refused > 500, `${refused} damaged documents were invalid JSON`);
  });

  it('reads tricky text exactly, one byte at a time: multi-byte characters split, NUL, \\u escapes and pairs, 200 KB', () => {
    const big = Array.from({ length: 200 * 1024 }, (_, i) => String.fromCodePoint(0x20 + (i % 0x50))).join('');
    const items = [
      { traceId: 'mb', content: 'é中😀\u{10ffff}€' },
      { traceId: 'nul', content: 'a\0b\0' },
      { traceId: 'esc', content: '"\\/\b\f\n\r\t\u2028\ud83d\ude00' },
      { traceId: 'lone', content: '\ud800x\udfff' },
      { traceId: 'big', content: big + '😀' },
      { traceId: 'quotes\\', content: '\\\\"\\' },
    ];
    const text = `{"data":${JSON.stringify(items).replace('\\u0000', '\\u0000')},"success":true}`;
    const bytes = Buffer.from(text.replace('\ud83d\ude00"', '\\ud83d\\ude00"'));
    for (const step of [1, 2, 3, 7, 4096]) {
      const cuts: number[] = [];
      for (let at = step; at < bytes.length; at += step) cuts.push(at);
      const got = parseSplit(bytes, cuts);
      assert.ok(!('error' in got), String((got as { error?: unknown }).error));
      assert.deepEqual(got.items, items, `step ${step}`);
    }
  });

  it('reads the envelope with data first, last, null or missing, and skips fields it does not know', () => {
    const item = { traceId: 't', content: 'c' };
    const cases: Array<[string, Partial<ListEnvelope>, number]> = [
      [`{"data":[${JSON.stringify(item)}],"code":"req_1","message":"ok","success":true}`, { data: 'array', success: true, code: 'req_1', message: 'ok' }, 1],
      [`{"success":true,"x":{"a":[1,{"b":"]}"}]},"code":7,"message":null,"data":[${JSON.stringify(item)},${JSON.stringify(item)}]}`, { data: 'array', success: true, code: 7, message: null }, 2],
      ['{"code":"e","message":"Not ready","data":null,"success":false}', { data: 'null', success: false }, 0],
      ['{"success":false,"message":"nope"}', { data: 'absent', success: false, message: 'nope' }, 0],
      ['{"data":{"items":[]},"success":true}', { data: 'other' }, 0],
    ];
    for (const [text, want, count] of cases) {
      const got = parseSplit(Buffer.from(text), [5, 17]);
      assert.ok(!('error' in got), `${text}: ${String((got as { error?: unknown }).error)}`);
      for (const [k, v] of Object.entries(want)) assert.deepEqual((got.envelope as unknown as Record<string, unknown>)[k], v, `${text}: ${k}`);
      assert.equal(got.items.length, count, text);
    }
  });

  it('hands items on in batches as they come, and stops at the first bad item', () => {
    const items = Array.from({ length: 25 }, (_, i) => ({ traceId: `t${i}`, content: 'x'.repeat(100) }));
    const got = parseSplit(Buffer.from(JSON.stringify({ data: items, success: true })), [], { maxItemBytes: 1024, batchItems: 10, batchChars: 1e9 });
    assert.deepEqual('batchSizes' in got && got.batchSizes, [10, 10]);
    assert.equal(got.items.length, 25);
    const bad = parseSplit(Buffer.from(JSON.stringify({ data: [items[0], { traceId: 3 }, items[1]], success: true })), []);
    assert.equal('envelope' in bad ? bad.envelope?.dataIssue : bad.error, 'item 1: traceId: expected string');
    assert.deepEqual(bad.items, [items[0]]);
  });

  it('refuses malformed bodies, an item over the cap and runaway nesting, in words', () => {
    for (const text of ['', '   ', '{"data":[', '{"a":1,}', '{"a":01}', '[1 2]', '{"a":"\u0001"}', '{"a":"\\x"}', '{"a":NaN}', '{"a":1}}', '\ufeff{}', '{"a" 1}', '{"data":[{"traceId":"t","content":"\\ud8"}]}']) {
      const got = parseSplit(Buffer.from(text), []);
      assert.ok('error' in got && got.error instanceof ListSyntaxError, `${JSON.stringify(text)}: ${JSON.stringify(got)}`);
    }
    const huge = parseSplit(Buffer.from(JSON.stringify({ data: [{ traceId: 'a', content: 'x'.repeat(2000) }] })), [100, 900], { maxItemBytes: 1000, batchItems: 10, batchChars: 1e9 });
    assert.ok('error' in huge && huge.error instanceof ListLimitError);
    assert.match(huge.error.message, /item 0 is larger than/);
    const deep = new ListParser({ maxItemBytes: 1e6, batchItems: 10, batchChars: 1e6, maxDepth: 1000 });
    assert.throws(() => deep.write(Buffer.from(`{"x":${'['.repeat(2000)}`)), /nested more than 1000 deep/);
  });
});
