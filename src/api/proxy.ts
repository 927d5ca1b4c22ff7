/**
 * Corporate proxies: where requests to the service and to model endpoints go when a proxy is set. The
 * dispatching itself is undici's (EnvHttpProxyAgent, CONNECT tunnels for every request); this module only
 * decides the configuration and describes it for error messages, never with the proxy's credentials.
 */
export interface ProxyConfig {
  /** Proxy URL for http:// requests (may carry user:password, sent as Proxy-Authorization, never shown). */
  httpProxy?: string;
  /** Proxy URL for https:// requests. */
  httpsProxy?: string;
  /** Hosts reached directly, comma- or space-separated, curl's way: "localhost,.corp.example,10.0.0.1:8080", "*". */
  noProxy?: string;
  /** A Proxy-Authorization header value (VS Code's http.proxyAuthorization); secret, never shown. */
  authorization?: string;
  /** false: the proxy's own certificate is not verified (VS Code's http.proxyStrictSSL: false). */
  strictSSL?: boolean;
}

/** The proxy the environment names, as curl reads it: lower case first, then upper case. */
export function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): ProxyConfig | undefined {
  const pick = (name: string) => env[name.toLowerCase()] || env[name.toUpperCase()] || undefined;
  const httpProxy = pick('http_proxy');
  // https requests fall back to HTTP_PROXY, as curl and undici do.
  const httpsProxy = pick('https_proxy') ?? httpProxy;
  if (!httpProxy && !httpsProxy) return undefined;
  const noProxy = pick('no_proxy');
  return { ...(httpProxy ? { httpProxy } : {}), ...(httpsProxy ? { httpsProxy } : {}), ...(noProxy ? { noProxy } : {}) };
}

/** Throws a plain error (never quoting credentials) when a proxy URL is not one undici can use. */
export function checkProxyConfig(config: ProxyConfig | undefined): void {
  for (const [name, value] of [
    ['HTTP proxy', config?.httpProxy],
    ['HTTPS proxy', config?.httpsProxy],
  ] as const) {
    if (!value) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new TypeError(`The ${name} is not a URL (expected http://host:port).`);
    }
    if (!['http:', 'https:', 'socks5:', 'socks:'].includes(url.protocol)) {
      throw new TypeError(`The ${name} ${shownProxy(value)} must be an http://, https:// or socks5:// URL.`);
    }
  }
}

/**
 * The proxy (shown without credentials) a request to this URL goes through, or undefined when it goes
 * direct. Mirrors undici's EnvHttpProxyAgent rule so error messages name the proxy that was really used:
 * "*" bypasses all; an entry matches its host and the host's subdomains; a port in the entry must match.
 */
export function proxyFor(config: ProxyConfig | undefined, url: URL): string | undefined {
  const proxy = url.protocol === 'https:' ? config?.httpsProxy : config?.httpProxy;
  if (!proxy) return undefined;
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  for (const raw of (config?.noProxy ?? '').split(/[,\s]/)) {
    if (!raw) continue;
    if (raw === '*') return undefined;
    const parsed = /^(.+):(\d+)$/.exec(raw);
    const entry = (parsed ? parsed[1]! : raw).replace(/^\*?\./, '').toLowerCase();
    if (parsed && Number(parsed[2]) !== port) continue;
    if (host === entry || host.endsWith(`.${entry}`)) return undefined;
  }
  return shownProxy(proxy);
}

/** A proxy URL as it may be shown: scheme, host and port, never a user name or password. */
export function shownProxy(proxy: string): string {
  try {
    const u = new URL(proxy);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(a proxy URL that does not parse)';
  }
}

// Through a tunnel, the proxy reports what happened beyond it as a CONNECT status (502, 504...): a failure
// to connect at all, or a name that does not resolve, is the proxy's own. A TLS error is the far end's.
const PROXY_CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT']);

/** Whether a request through a proxy failed at the proxy (so the message names it) rather than beyond it. */
export function failedAtProxy(error: unknown, code: string | undefined): boolean {
  const text = error instanceof Error ? error.message : '';
  return /Proxy response \(\d+\)|Proxy Authentication Required/.test(text) || (code !== undefined && PROXY_CONNECTION_CODES.has(code));
}

/**
 * Words for a failure through a proxy: undici reports a refused CONNECT as "Proxy response (407) !== 200
 * when HTTP Tunneling"; anything else (refused, unknown host) was the proxy's connection failing.
 */
export function proxyFailure(error: unknown, proxy: string): { message: string; status?: number } {
  const text = error instanceof Error ? error.message : String(error);
  const status = /Proxy response \((\d{3})\)/.exec(text)?.[1];
  if (status) {
    const why = status === '407' ? ' (Proxy Authentication Required: check the credentials in the proxy URL or http.proxyAuthorization)' : '';
    return { message: `the proxy ${proxy} refused the connection with HTTP ${status}${why}`, status: Number(status) };
  }
  if (/Proxy Authentication Required/.test(text)) return { message: `the proxy ${proxy} asks for credentials (HTTP 407)`, status: 407 };
  return { message: `the proxy ${proxy} could not be reached or closed the connection` };
}
