// The sandbox's HTTP plumbing: reading bodies and forms, writing JSON and HTML replies.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { multipartBoundary, parseMultipart } from './multipart';
import { parseUrlEncoded } from './urlEncodedForm';

export interface Reply {
  status: number;
  body: unknown;
  /** The body already encoded, in parts sent one after another (then `body` is unused). */
  parts?: readonly Buffer[];
  headers?: Record<string, string>;
  /** A body sent piece by piece as the client reads it (then `body` and `parts` are unused). */
  pieces?: Iterable<string>;
}

export function sendJson(res: ServerResponse, reply: Reply): void {
  if (reply.pieces) return sendPieces(res, reply, reply.pieces[Symbol.iterator]());
  if (reply.parts) return sendParts(res, reply, reply.parts);
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}

/** Writes bytes encoded before (a list's cached items): nothing is serialised, measured or encoded again. */
function sendParts(res: ServerResponse, reply: Reply, parts: readonly Buffer[]): void {
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': parts.reduce((sum, part) => sum + part.length, 0),
    ...reply.headers,
  });
  for (const part of parts) res.write(part);
  res.end();
}

/** Writes the pieces as the socket takes them (chunked), waiting for 'drain' whenever its buffer is full. */
function sendPieces(res: ServerResponse, reply: Reply, pieces: Iterator<string>): void {
  res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
  const pump = () => {
    for (;;) {
      const next = pieces.next();
      if (next.done) {
        res.end();
        return;
      }
      if (!res.write(next.value)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  res.on('close', () => pieces.return?.());
  pump();
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'content-length': Buffer.byteLength(html),
  });
  res.end(html);
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Beyond the limit the body is still read (and dropped) up to this much, so the client gets the 413.
const DRAIN_CAP_BYTES = 64 * 1024 * 1024;

/** Reads the whole body; past the limit it keeps draining (so the client sees the 413, not a reset). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'tooLarge'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > limit + DRAIN_CAP_BYTES) req.destroy();
    });
    req.on('end', () => resolve(size > limit ? 'tooLarge' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function parseForm(contentType: string, body: Buffer): Map<string, string> | 'unsupported' | 'malformed' {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return parseUrlEncoded(body);
  if (type === 'multipart/form-data') {
    const boundary = multipartBoundary(contentType);
    return (boundary && parseMultipart(body, boundary)) || 'malformed';
  }
  return 'unsupported';
}
