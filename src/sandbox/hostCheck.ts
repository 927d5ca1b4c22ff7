// Where the sandbox may be reached from, and by which name. It serves a well-known token on loopback; beyond
// loopback it needs a token of the user's own. A web page can rebind its own name to 127.0.0.1 and read the
// sandbox as same-origin: the browser then sends that name as Host, so only the names below are answered.
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/** The names of this machine's loopback, as a Host header carries them (IPv6 in brackets). */
export const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'] as const;

/** 127.0.0.0/8, ::1 (also written long or IPv4-mapped) and localhost: only this machine can connect there. */
export function isLoopbackHost(host: string): boolean {
  const name = host.trim().toLowerCase();
  if (name === 'localhost') return true;
  const version = isIP(name);
  if (version === 4) return name.startsWith('127.');
  if (version !== 6) return false;
  // The URL parser writes an IPv6 address in its shortest form, an IPv4-mapped one in hex (::ffff:7f00:1).
  const short = new URL(`http://[${name}]/`).hostname;
  return short === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(short);
}

/** An address as it stands in a Host header or a URL: IPv6 in brackets, names lower case. */
export function hostName(address: string): string {
  return isIP(address) === 6 ? new URL(`http://[${address}]/`).hostname : address.toLowerCase();
}

/**
 * The names the sandbox answers to, as a Host header carries them: its loopback names and the address it listens
 * on; listening on every address (0.0.0.0, ::), the machine's own addresses too (a client elsewhere names the
 * address it connected to).
 */
export function answeredNames(listenHost: string): Set<string> {
  const names = new Set<string>([...LOOPBACK_NAMES, hostName(listenHost)]);
  if (/^(0\.0\.0\.0|::|0:0:0:0:0:0:0:0)$/.test(listenHost.trim())) {
    for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) if (!a.address.includes('%')) names.add(hostName(a.address));
  }
  return names;
}

/**
 * Whether a Host header names one of `names`. Any port: a page that rebinds its own name sends that name whatever
 * the port, while a forwarded port (ssh -L, an editor's port forwarding) reaches the sandbox under another number.
 */
export function isAnsweredHost(header: string | undefined, names: ReadonlySet<string>): boolean {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::\d{1,5})?$/.exec((header ?? '').toLowerCase());
  return m !== null && names.has(m[1]!);
}

/**
 * isAnsweredHost with a memory of the headers it answered: a client sends the same Host on every request, and the
 * lower-casing and pattern took 0.3 µs of the sandbox's 25 µs a request on the bench's ceiling. Only answered headers
 * are kept, and at most HOSTS_KEPT of them (any port is answered, so a client could send many).
 */
export function answeredHostCheck(names: ReadonlySet<string>): (header: string | undefined) => boolean {
  const answered = new Set<string>();
  return (header) => {
    if (header === undefined) return false;
    if (answered.has(header)) return true;
    if (!isAnsweredHost(header, names)) return false;
    if (answered.size < HOSTS_KEPT) answered.add(header);
    return true;
  };
}

const HOSTS_KEPT = 64;
