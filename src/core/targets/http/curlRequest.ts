import { CurlSyntaxError, detectShell, splitWords } from './curlShell';
import type { CurlShell, Word } from './curlShell';
import { splitSecretQuery } from './curlQuery';
import { looksSecretHeader } from '../targetSecrets';
import { PROMPT, stringNodes } from './curlBody';
import type { PromptField } from './curlBody';

export { CurlSyntaxError as CurlError } from './curlShell';
// The editor's import keeps every other header in secret storage (src/extension/targets/curlImport.ts), with this module only.
export { isPlainHeader } from '../targetSecrets';
export type { CurlShell } from './curlShell';
export { fieldList, withPromptAt } from './curlBody';
export type { PromptField } from './curlBody';

/**
 * A request pasted as a curl command (DevTools' "Copy as cURL", Postman, API docs), read into what the http
 * target needs: method, URL, headers (secret ones apart) and the body with {{prompt}} where the prompt goes.
 */
export interface CurlRequest {
  shell: CurlShell;
  method: string;
  /** Without its secret query parameters (see secretQuery). */
  url: string;
  /**
   * The query parameters that use a variable or whose name says they carry a credential (key, token, sig…), with
   * their values: taken out of the URL, to go where secrets go (the http target's secretQuery).
   */
  secretQuery: Record<string, string>;
  /** Header names in lower case; the values of the ones that carry no credential. */
  headers: Record<string, string>;
  /** Credentials (Authorization, API keys, cookies, -u, and any header that uses a variable): kept apart. */
  secretHeaders: Record<string, string>;
  /** The body as curl would send it. */
  body?: string;
  /** The body when it holds {{prompt}}: the http target's bodyTemplate as it is. */
  bodyTemplate?: string;
  /** Without {{prompt}}: the JSON body's string fields, one of which should take the prompt (see withPromptAt). */
  promptFields: PromptField[];
  /** The variables the command uses ($NAME, ${NAME}; %NAME% in cmd) and where, in order of first use. */
  variables: CurlVariable[];
  /** Options read but without an effect here (their names only): a front end may say they were left out. */
  ignored: string[];
}

/** Where a variable is: a header (or -u, -b), the URL's query, the rest of the URL, or the body. */
export interface CurlVariable {
  name: string;
  in: 'header' | 'query' | 'url' | 'body';
}

export interface CurlReadOptions {
  /** The shell the command was written for; by default read from the command (^ continuations: cmd). */
  shell?: CurlShell;
  /** A variable's value; without it, variables stay as written ($NAME) in what is returned. */
  variable?: (name: string) => string;
}

/** Reads a curl command. A CurlError says what cannot be read, and never quotes a value from the command. */
export function readCurl(text: string, options: CurlReadOptions = {}): CurlRequest {
  const shell = options.shell ?? detectShell(text);
  const words = splitWords(text, shell);
  while (words.length > 0 && wordText(words[0]!) === '$') words.shift(); // a shell prompt copied from docs
  const program = words.length > 0 ? wordText(words[0]!) : '';
  if (!/^(.*[\\/])?curl(\.exe)?$/i.test(program)) throw new CurlSyntaxError('This is not a curl command: it should start with curl.');
  const draft = new Draft(options.variable);
  readOptions(words.slice(1), draft);
  return draft.finish(shell);
}

type Handler = (draft: Draft, value: Word) => void;

const header =
  (name: string, secret = false): Handler =>
  (d, v) =>
    d.setHeader(name, d.text(v, 'header'), secret || d.hasVariable(v));

/** Options with a value that shape the request. */
const VALUED: Record<string, Handler> = {
  '-X': (d, v) => (d.method = d.text(v, 'header').toUpperCase()),
  '--request': (d, v) => (d.method = d.text(v, 'header').toUpperCase()),
  '-H': (d, v) => d.header(v),
  '--header': (d, v) => d.header(v),
  '-d': (d, v) => d.data(v, true),
  '--data': (d, v) => d.data(v, true),
  '--data-ascii': (d, v) => d.data(v, true),
  '--data-binary': (d, v) => d.data(v, true),
  '--data-raw': (d, v) => d.data(v, false),
  '--json': (d, v) => d.json(v),
  '-u': (d, v) => d.user(v),
  '--user': (d, v) => d.user(v),
  '--url': (d, v) => d.setUrl(v),
  '-A': header('user-agent'),
  '--user-agent': header('user-agent'),
  '-e': header('referer'),
  '--referer': header('referer'),
  '-b': (d, v) => d.cookie(v),
  '--cookie': (d, v) => d.cookie(v),
  '--oauth2-bearer': (d, v) => d.setHeader('authorization', `Bearer ${d.text(v, 'header')}`, true),
};

/** Options that change nothing in the request itself (output, progress, redirects, compression, retries). */
const NO_EFFECT_FLAGS = new Set(
  '-s --silent -S --show-error -v --verbose -i --include -L --location --location-trusted --compressed -N --no-buffer -f --fail --fail-with-body -g --globoff -# --progress-bar --no-progress-meter -q --disable --http1.0 --http1.1 --http2 --http2-prior-knowledge --http3 --raw --tr-encoding --no-keepalive --tcp-nodelay --path-as-is -4 --ipv4 -6 --ipv6 --no-alpn --no-npn --no-sessionid --ssl-no-revoke -k --insecure'.split(' '),
);
const NO_EFFECT_VALUED = new Set(
  '-o --output -m --max-time --connect-timeout -w --write-out --retry --retry-delay --retry-max-time --limit-rate --max-redirs --resolve --cacert --capath --cert -E --key --cert-type --key-type -x --proxy -U --proxy-user --noproxy --interface --trace --trace-ascii -D --dump-header --stderr'.split(' '),
);
/** Options whose request this reader cannot make into a JSON body with a prompt in it. */
const REFUSED: Record<string, string> = {
  '-F': 'a multipart form (-F)',
  '--form': 'a multipart form (--form)',
  '--form-string': 'a multipart form (--form-string)',
  '-G': 'the data sent in the URL (-G)',
  '--get': 'the data sent in the URL (--get)',
  '-T': 'an uploaded file (-T)',
  '--upload-file': 'an uploaded file (--upload-file)',
  '--data-urlencode': 'URL-encoded data (--data-urlencode)',
  '-K': 'a curl config file (-K)',
  '--config': 'a curl config file (--config)',
  '-I': 'a HEAD request (-I)',
  '--head': 'a HEAD request (--head)',
};

function readOptions(words: readonly Word[], draft: Draft): void {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const text = wordText(word);
    if (text === '--') {
      for (const url of words.slice(i + 1)) draft.setUrl(url);
      return;
    }
    if (!text.startsWith('-') || text === '-') draft.setUrl(word);
    else if (text.startsWith('--')) i += longOption(text, words[i + 1], draft);
    else i += shortOptions(word, words[i + 1], draft);
  }
}

/** One --option (and its value, the next word): how many more words it took. */
function longOption(name: string, next: Word | undefined, draft: Draft): number {
  if (NO_EFFECT_FLAGS.has(name) || (name.startsWith('--no-') && NO_EFFECT_FLAGS.has(`--${name.slice(5)}`))) {
    draft.ignored.push(name);
    return 0;
  }
  refuse(name);
  const handler = VALUED[name];
  if (!handler && !NO_EFFECT_VALUED.has(name)) throw new CurlSyntaxError(`The curl option ${name.slice(0, 40)} is not one this reader knows: remove it and try again.`);
  if (next === undefined) throw new CurlSyntaxError(`The curl option ${name} needs a value after it.`);
  if (handler) handler(draft, next);
  else draft.ignored.push(name);
  return 1;
}

/** -sSL, -XPOST, -H 'a: b': letters together, the last one's value attached or in the next word. */
function shortOptions(word: Word, next: Word | undefined, draft: Draft): number {
  const letters = wordText(word);
  for (let k = 1; k < letters.length; k++) {
    const name = `-${letters[k]}`;
    if (NO_EFFECT_FLAGS.has(name)) {
      draft.ignored.push(name);
      continue;
    }
    refuse(name);
    const handler = VALUED[name];
    if (!handler && !NO_EFFECT_VALUED.has(name)) throw new CurlSyntaxError(`The curl option ${name} is not one this reader knows: remove it and try again.`);
    const attached = k + 1 < letters.length ? sliceWord(word, k + 1) : undefined;
    const value = attached ?? next;
    if (value === undefined) throw new CurlSyntaxError(`The curl option ${name} needs a value after it.`);
    if (handler) handler(draft, value);
    else draft.ignored.push(name);
    return attached ? 0 : 1;
  }
  return 0;
}

function refuse(name: string): void {
  const what = REFUSED[name];
  if (what) throw new CurlSyntaxError(`The command sends ${what}; the http target sends a JSON body. Rewrite the request with -d or --json.`);
}

/** A word without its first `from` characters (which are literal: option letters). */
function sliceWord(word: Word, from: number): Word {
  const out: Word = [];
  let skip = from;
  for (const part of word) {
    if ('text' in part && skip > 0) {
      const rest = part.text.slice(skip);
      skip = Math.max(0, skip - part.text.length);
      if (rest) out.push({ text: rest });
    } else out.push(part);
  }
  return out;
}

/** The names of the query parameters whose value holds a variable (a name written with one is taken as it reads). */
function queryNamesWithVariables(word: Word): string[] {
  // Each variable becomes a mark no URL holds, so the query can be split as text and the marked values found.
  const marked = word.map((p) => ('text' in p ? p.text : '\u0000')).join('');
  const query = marked.split('#')[0]!.split('?').slice(1).join('?');
  return query
    .split('&')
    .filter((pair) => pair.slice(pair.indexOf('=') + 1).includes('\u0000') && pair.includes('='))
    .map((pair) => pair.slice(0, pair.indexOf('=')));
}

/** A word's text with its variables as written. */
function wordText(word: Word): string {
  return word.map((p) => ('text' in p ? p.text : p.raw)).join('');
}

/** Headers the HTTP client sets itself, or that would spoil the exchange (an encoding it would not decode). */
const DROPPED_HEADERS = new Set(['content-length', 'host', 'accept-encoding', 'connection', 'transfer-encoding']);

class Draft {
  method: string | undefined;
  url: string | undefined;
  readonly ignored: string[] = [];
  /** The URL's query parameters whose value uses a variable. */
  private variableQuery: string[] = [];
  private readonly headers = new Map<string, { value: string; secret: boolean }>();
  private readonly bodies: string[] = [];
  private sawJson = false;
  private readonly variables: CurlVariable[] = [];
  private headerCount = 0;

  constructor(private readonly resolve?: (name: string) => string) {}

  /** A word's text, its variables read (or left as written) and noted with where they are. */
  text(word: Word, where: CurlVariable['in']): string {
    let sawQuery = false;
    let out = '';
    for (const part of word) {
      if ('text' in part) {
        out += part.text;
        sawQuery ||= part.text.includes('?');
        continue;
      }
      const place = where === 'url' && sawQuery ? 'query' : where;
      if (!this.variables.some((v) => v.name === part.variable && v.in === place)) this.variables.push({ name: part.variable, in: place });
      out += this.resolve ? this.resolve(part.variable) : part.raw;
    }
    return out;
  }

  hasVariable(word: Word): boolean {
    return word.some((p) => 'variable' in p);
  }

  header(word: Word): void {
    const text = this.text(word, 'header');
    const position = ++this.headerCount;
    if (text.startsWith('@')) throw new CurlSyntaxError(`Header ${position} (-H) reads headers from a file: write them as -H 'Name: value'.`);
    const m = /^([^:;\s]+)\s*([:;])[ \t]*([\s\S]*)$/.exec(text);
    if (!m) throw new CurlSyntaxError(`Header ${position} (-H) has no name and colon: write it as -H 'Name: value'.`);
    const [, name, mark, value] = m;
    // curl: "Name:" with nothing after takes the header away; "Name;" sends it empty.
    if (mark === ':' && value!.trim() === '') this.headers.delete(name!.toLowerCase());
    else this.setHeader(name!, mark === ';' ? '' : value!.trim(), this.hasVariable(word));
  }

  setHeader(name: string, value: string, usesVariable: boolean): void {
    const key = name.toLowerCase();
    if (DROPPED_HEADERS.has(key) || key.startsWith(':')) return;
    this.headers.set(key, { value, secret: usesVariable || looksSecretHeader(key, value) });
  }

  data(word: Word, fileAllowed: boolean): void {
    const text = this.text(word, 'body');
    if (fileAllowed && text.startsWith('@')) throw new CurlSyntaxError('The body is read from a file (-d @file): paste the body itself, with --data-raw or -d.');
    this.bodies.push(text);
  }

  json(word: Word): void {
    this.data(word, true);
    this.sawJson = true;
  }

  user(word: Word): void {
    const text = this.text(word, 'header');
    if (!text.includes(':')) throw new CurlSyntaxError('-u gives a user without a password, which curl would ask for: write -u user:password.');
    this.setHeader('authorization', `Basic ${Buffer.from(text, 'utf8').toString('base64')}`, true);
  }

  cookie(word: Word): void {
    const text = this.text(word, 'header');
    if (!text.includes('=')) throw new CurlSyntaxError('-b names a cookie file: write the cookies themselves, as -b "name=value".');
    const before = this.headers.get('cookie')?.value;
    this.setHeader('cookie', before ? `${before}; ${text}` : text, true);
  }

  setUrl(word: Word): void {
    if (this.url !== undefined) throw new CurlSyntaxError('The command has more than one URL (or a word curl would take as one): keep one request.');
    const text = this.text(word, 'url');
    this.url = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
    this.variableQuery = queryNamesWithVariables(word);
  }

  finish(shell: CurlShell): CurlRequest {
    if (this.url === undefined) throw new CurlSyntaxError('The command has no URL.');
    checkUrl(this.url, this.resolve !== undefined || !this.variables.some((v) => v.in === 'url'));
    if (this.sawJson) {
      if (!this.headers.has('content-type')) this.setHeader('content-type', 'application/json', false);
      if (!this.headers.has('accept')) this.setHeader('accept', 'application/json', false);
    }
    const body = this.bodies.length > 0 ? this.bodies.join(this.sawJson ? '' : '&') : undefined;
    const split = { headers: {} as Record<string, string>, secretHeaders: {} as Record<string, string> };
    for (const [name, h] of this.headers) (h.secret ? split.secretHeaders : split.headers)[name] = h.value;
    const { url, secretQuery } = splitSecretQuery(this.url, this.variableQuery);
    return {
      shell,
      method: this.method ?? (body !== undefined ? 'POST' : 'GET'),
      url,
      secretQuery,
      ...split,
      ...(body !== undefined ? { body } : {}),
      ...(body?.includes(PROMPT) ? { bodyTemplate: body } : {}),
      promptFields: body === undefined || body.includes(PROMPT) ? [] : stringNodes(body).map(({ path, dotted, value }) => ({ path, dotted, value })),
      variables: this.variables,
      ignored: [...new Set(this.ignored)],
    };
  }
}

function checkUrl(url: string, complete: boolean): void {
  if (url.includes(PROMPT)) throw new CurlSyntaxError('{{prompt}} is in the URL; the http target puts the prompt in the body only.');
  if (!complete) return; // its variables not read yet: checked when they are
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // said below
  }
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:') throw new CurlSyntaxError("The command's URL is not a valid http:// or https:// URL.");
}
