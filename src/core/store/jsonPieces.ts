/** Elements of a long array made into text at a time. */
const CHUNK = 4096;

/**
 * JSON.stringify's text of plain data (objects, arrays, strings, numbers, booleans, null), in pieces: a long array a
 * chunk of elements at a time, so no piece is more than a few hundred KB whatever the whole (the index's header holds
 * every trace id and every answer's time: 18 MB at 600,000 traces, and it was made whole, then copied whole).
 * Joined, the pieces are JSON.stringify(value)'s text exactly: an undefined property is left out, an undefined
 * element is null.
 */
export function* jsonPieces(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    yield* arrayPieces(value);
    return;
  }
  if (value === null || typeof value !== 'object') {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  let first = true;
  yield '{';
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* jsonPieces(v);
  }
  yield '}';
}

/** An array holding objects element by element (each may be large); one of plain values a chunk at a time. */
function* arrayPieces(value: readonly unknown[]): Generator<string> {
  if (value.some((v) => v !== null && typeof v === 'object')) {
    yield '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ',';
      yield* jsonPieces(value[i]);
    }
    yield ']';
    return;
  }
  if (value.length <= CHUNK) {
    yield JSON.stringify(value);
    return;
  }
  yield '[';
  for (let from = 0; from < value.length; from += CHUNK) yield `${from > 0 ? ',' : ''}${JSON.stringify(value.slice(from, from + CHUNK)).slice(1, -1)}`;
  yield ']';
}
