import assert from 'node:assert/strict';
import { parseUrlEncoded } from '../../src/sandbox/urlEncodedForm';

/** What the sandbox read before its own reader: URLSearchParams, a repeated name's first value kept. */
function reference(body: Buffer): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) if (!fields.has(name)) fields.set(name, value);
  return fields;
}

// Pieces a body is made of: separators, pluses, escapes good and bad (a stray '%', bytes that are not UTF-8, an
// encoded surrogate), text a client sends raw, raw bytes that are not UTF-8, and a leading '?'.
const PIECES = [
  ...['a', 'llmResponse', 'é', '中', '😀', '=', '&', '+', '%', '%2', '%2B', '%26', '%3D', '%20', '%c3%A9', '%C3', '%E4%B8%AD', '%F0%9F%98%80', '%ED%A0%80', '%zz', '%%', '?', ' ', '\n'].map((p) => Buffer.from(p)),
  Buffer.from([0xff]),
  Buffer.from([0xc3]),
];

describe('sandbox form reader', () => {
  it('reads every urlencoded body as URLSearchParams does', () => {
    // mulberry32: the same bodies every run.
    let seed = 48;
    const next = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    for (let i = 0; i < 5000; i++) {
      const parts: Buffer[] = [];
      for (let count = next(12); count > 0; count--) parts.push(PIECES[next(PIECES.length)]!);
      const body = Buffer.concat(parts);
      assert.deepEqual([...parseUrlEncoded(body)], [...reference(body)], JSON.stringify(body.toString('latin1')));
    }
  });

  it('reads a submission as the client encodes it', () => {
    const answer = 'Line one\r\nLine two: « Bonjour » 🌍 a+b&c=d%20 100% ';
    const body = Buffer.from(new URLSearchParams({ evaluationId: '1', traceId: 'bench a+b&c=d%20/ü', llmResponse: answer }).toString());
    assert.deepEqual(parseUrlEncoded(body), new Map([['evaluationId', '1'], ['traceId', 'bench a+b&c=d%20/ü'], ['llmResponse', answer]]));
  });
});
