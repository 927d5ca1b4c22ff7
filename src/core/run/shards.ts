// Shards: an evaluation split over machines (a CI matrix, Kubernetes indexed jobs). Shard K of N takes the traces
// whose hash of the trace id falls in bucket K-1 of N. The hash is FNV-1a (32 bits) over the id's UTF-8 bytes:
// the same on every machine, platform and version (a unit test pins it), and it needs no list to agree on, so
// each machine lists the prompts itself and runs its own part.

export interface Shard {
  /** 1-based, as people write it: shard 1/4 … 4/4. */
  index: number;
  count: number;
}

/** "K/N" (1 ≤ K ≤ N ≤ 1000) as a shard; a RangeError in words otherwise. */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d{1,4})\s*\/\s*(\d{1,4})\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || count > 1000 || index < 1 || index > count) {
    throw new RangeError(`A shard is K/N with 1 ≤ K ≤ N ≤ 1000, e.g. 2/4 (got "${text}").`);
  }
  return { index, count };
}

export function formatShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** FNV-1a, 32 bits, over the UTF-8 bytes of the text. */
export function traceHash(traceId: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(traceId, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** Does this trace belong to the shard? */
export function inShard(traceId: string, shard: Shard): boolean {
  return traceHash(traceId) % shard.count === shard.index - 1;
}
