/**
 * What a target must keep to itself: the values of its credential headers and of its URL's query (where
 * some endpoints take their key). Every text an endpoint sends back passes through `redactSecrets` before it
 * can reach an error message, a log, the journal, an export or the service.
 */

// Headers that never carry a credential; every other header value is treated as a secret.
const PLAIN_HEADERS = new Set(['content-type', 'accept', 'user-agent', 'content-length']);

/** Header values (with and without an auth scheme) and URL query values, longest first, empties dropped. */
export function targetSecrets(headers: Record<string, string>, url?: string): string[] {
  const values = Object.entries(headers)
    .filter(([name]) => !PLAIN_HEADERS.has(name.toLowerCase()))
    .flatMap(([, value]) => [value, value.replace(/^(Bearer|Basic|Token)\s+/i, '')]);
  if (url) {
    const query = new URL(url).searchParams;
    for (const [, value] of query) values.push(value, encodeURIComponent(value));
  }
  // Longest first, so a value that contains a shorter one is replaced whole. No length floor: a short key
  // is still a key, and these are only ever applied to error text, never to answers.
  return [...new Set(values.map((v) => v.trim()).filter((v) => v.length > 0))].sort((a, b) => b.length - a.length);
}

export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

/** Loopback names and addresses: plain http there never crosses a network. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** A warning when a credential is about to cross a network unencrypted; undefined when it is not. */
export function plainHttpWarning(url: string, what: string): string | undefined {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' || isLoopbackHost(parsed.hostname)) return undefined;
  return `${what} goes over plain http to ${parsed.host}: anyone on the network between can read it. Use https:// if the endpoint offers it.`;
}
