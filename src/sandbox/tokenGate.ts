// Beyond loopback, anyone who reaches the port could read a run's prompts and answers: the echo model and the Batch
// API echo them, the pages show them. There every route but /healthz needs the user's token. On loopback nothing
// changes (the editor's sandbox, the demo and the tests use the echo model with no key).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Reply } from './httpIo';

/** A token compared in a time that does not depend on where it differs (the sandbox may listen beyond loopback). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header, as the service's clients and OpenAI's send it. */
export function bearerOf(authorization: string | undefined): string | undefined {
  return authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
}

/** What a sandbox beyond loopback says instead of a route: a refusal as JSON (an API) or as text (a page). */
export type GateRefusal = { json: Reply } | { text: string; status: number };

/** The refusal of a request to a sandbox beyond loopback, or undefined when the route may answer it. */
export function refusalBeyondLoopback(path: string, authorization: string | undefined, token: string): GateRefusal | undefined {
  // /healthz tells nothing; the service's endpoints refuse a wrong token themselves, in the spec's envelope.
  if (path === '/healthz' || path.startsWith('/api/')) return undefined;
  if (!path.startsWith('/v1/')) return { status: 403, text: PAGES_ON_LOOPBACK_ONLY };
  const given = bearerOf(authorization);
  if (given !== undefined && sameSecret(given, token)) return undefined;
  // As OpenAI answers a missing or wrong key, so an OpenAI client says the right thing.
  const message = given === undefined ? 'Missing Authorization header: send "Authorization: Bearer <token>" with the sandbox\'s token (its --token-env variable).' : "The token is not the sandbox's (its --token-env variable).";
  return { json: { status: 401, body: { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }, headers: { 'www-authenticate': 'Bearer' } } };
}

// A browser sends no Authorization header, and a token in a link would land in its history: no pages here.
const PAGES_ON_LOOPBACK_ONLY =
  'Forbidden: the Process Details pages are served on loopback only, and this sandbox listens beyond it. Start a sandbox on --host 127.0.0.1 (the default) to see them; from another machine, forward its port (ssh -L 8787:127.0.0.1:8787 <this machine>).\n';
