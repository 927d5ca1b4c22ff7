import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RateLimitedModelOptions {
  /** Requests per second the token bucket refills; it holds a second's worth. */
  perSecond: number;
  /** How long each admitted answer takes. */
  latencyMs: number;
  /** Send OpenAI's x-ratelimit-* headers on every answer. */
  headers?: boolean;
  /** How many seconds' worth of requests the bucket holds (its burst); default 1. */
  burstSeconds?: number;
}

export interface RateLimitedModel {
  url: string;
  stats: { admitted: number; rejected: number; byPrompt: Map<string, number> };
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible echo model behind a token bucket, as hosted APIs limit requests: over the limit it
 * answers 429 with Retry-After: 1. For the benchmark's rate-limited rows and the reliability suite.
 */
export async function startRateLimitedModel(options: RateLimitedModelOptions): Promise<RateLimitedModel> {
  const capacity = Math.max(1, options.perSecond * (options.burstSeconds ?? 1));
  let tokens = capacity;
  let refilledAt = performance.now();
  const stats = { admitted: 0, rejected: 0, byPrompt: new Map<string, number>() };
  const take = (): boolean => {
    const now = performance.now();
    tokens = Math.min(capacity, tokens + ((now - refilledAt) / 1000) * options.perSecond);
    refilledAt = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
  const limitHeaders = (): Record<string, string> =>
    options.headers
      ? {
          'x-ratelimit-limit-requests': String(Math.round(options.perSecond * 60)),
          'x-ratelimit-remaining-requests': String(Math.floor(tokens)),
          'x-ratelimit-reset-requests': `${((capacity - tokens) / options.perSecond).toFixed(3)}s`,
        }
      : {};
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!take()) {
        stats.rejected++;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1', ...limitHeaders() });
        res.end(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }));
        return;
      }
      stats.admitted++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { messages?: Array<{ content?: string }> };
      const prompt = body.messages?.at(-1)?.content ?? '';
      stats.byPrompt.set(prompt, (stats.byPrompt.get(prompt) ?? 0) + 1);
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', ...limitHeaders() });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: prompt } }] }));
      }, options.latencyMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
