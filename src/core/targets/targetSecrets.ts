/**
 * What a target must keep to itself: the values of its credential headers and of its URL's query (where
 * some endpoints take their key). Every text an endpoint sends back passes through `redactSecrets` before it
 * can reach an error message, a log, the journal, an export or the service.
 */

// Headers that never carry a credential; every other header value is treated as a secret (redacted from what an
// endpoint says; kept in secret storage by the editor's curl import). Browsers' own sec-* headers are plain too.
const PLAIN_HEADERS = new Set(['content-type', 'accept', 'accept-language', 'user-agent', 'content-length', 'cache-control', 'pragma', 'priority', 'anthropic-version', 'openai-beta']);

export function isPlainHeader(name: string): boolean {
  const key = name.toLowerCase();
  return PLAIN_HEADERS.has(key) || key.startsWith('sec-ch-') || key.startsWith('sec-fetch-');
}

const SECRET_HEADER_NAME = /auth|key|token|secret|session|cookie|passw|credential|signature/i;
// An auth scheme, a provider's key prefix (OpenAI, Anthropic, Google, GitHub, GitLab, Slack), or a long opaque run of
// letters and digits with both in it.
const CREDENTIAL_VALUE = /^(Bearer|Basic|Token|Digest)\s+\S|^(sk|pk|rk)-|^(AIza|ghp_|gho_|github_pat_|glpat-|xox[abprs]-)|^(?=\S*[0-9])(?=\S*[A-Za-z])[A-Za-z0-9._~+/=-]{24,}$/;

/** A header a user wrote as plain that holds a credential all the same: by its name, or by its value's shape. */
export function looksSecretHeader(name: string, value: string): boolean {
  return !isPlainHeader(name) && (SECRET_HEADER_NAME.test(name) || CREDENTIAL_VALUE.test(value.trim()));
}

/** Header values (with and without an auth scheme) and URL query values, longest first, empties dropped. */
export function targetSecrets(headers: Record<string, string>, url?: string): string[] {
  const values = Object.entries(headers)
    .filter(([name]) => !isPlainHeader(name))
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
