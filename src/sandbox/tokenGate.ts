// Beyond loopback, anyone who reaches the port could read a run's prompts and answers: the echo model and the Batch
// API echo them, the pages show them. There every route but /healthz needs the user's token. On loopback nothing
// changes (the editor's sandbox, the demo and the tests use the echo model with no key).
import { timingSafeEqual } from 'node:crypto';
import type { Reply } from './httpIo';

/**
 * A check of tokens against `expected` (the sandbox may listen beyond loopback) in a time that depends on the token
 * given alone: not on where it differs, nor on the expected one's length. Bytes, not digests: two SHA-256 digests a
 * request were 7 % of the sandbox's CPU on the bench's ceiling (its --cpu-prof, 64 connections).
 */
export function secretCheck(expected: string): (given: string) => boolean {
  const want = Buffer.from(expected, 'utf8');
  return (given) => {
    const got = Buffer.from(given, 'utf8');
    const sameLength = got.length === want.length;
    // Of another length, compared with itself: the same work as with a secret of its length.
    return timingSafeEqual(got, sameLength ? want : got) && sameLength;
  };
}

/** The token of an `Authorization: Bearer <token>` header, as the service's clients and OpenAI's send it. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
}

/** What a sandbox beyond loopback says instead of a route: a refusal as JSON (an API) or as text (a page). */
export type GateRefusal = { json: Reply } | { text: string; status: number };

/** The refusal of a request to a sandbox beyond loopback, or undefined when the route may answer it. */
export function refusalBeyondLoopback(path: string, authorization: string | undefined, isToken: (given: string) => boolean): GateRefusal | undefined {
  // /healthz tells nothing; the service's endpoints refuse a wrong token themselves, in the spec's envelope.
  if (path === '/healthz' || path.startsWith('/api/')) return undefined;
  if (!path.startsWith('/v1/')) return { status: 403, text: PAGES_ON_LOOPBACK_ONLY };
  const given = bearerOf(authorization);
  if (given !== undefined && isToken(given)) return undefined;
  // As OpenAI answers a missing or wrong key, so an OpenAI client says the right thing.
  const message = given === undefined ? 'Missing Authorization header: send "Authorization: Bearer <token>" with the sandbox\'s token (its --token-env variable).' : "The token is not the sandbox's (its --token-env variable).";
  return { json: { status: 401, body: { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }, headers: { 'www-authenticate': 'Bearer' } } };
}

// A browser sends no Authorization header, and a token in a link would land in its history: no pages here.
const PAGES_ON_LOOPBACK_ONLY =
  'Forbidden: the Process Details pages are served on loopback only, and this sandbox listens beyond it. Start a sandbox on --host 127.0.0.1 (the default) to see them; from another machine, forward its port (ssh -L 8787:127.0.0.1:8787 <this machine>).\n';
