// The run's secrets as (variable, where it goes, who named it), before any value is read: checked against the
// core's owners (the service token, variables bound to one provider), said on stderr, and asked about when a file
// named them.
import { readCurl, variableRefusal } from '../core';
import type { SecretRead } from '../core';
import { UsageError } from './exitCodes';

/** A file that names variables: a curl file (--from-curl) or a config file (--config), by its content. */
export interface NamingFile {
  flag: '--from-curl' | '--config';
  path: string;
  /** sha256 of its text: an approval holds for this content only. */
  sha256: string;
}

/** A variable read as a secret, where it goes, and the file that named it (none: the command line or a rule). */
export interface SecretUse extends SecretRead {
  file?: NamingFile;
  /** The command line named the variable; `file` chose only the origin it goes to (a config's url, a curl file's). */
  originOnly?: true;
}

/** Who named the variable, for words: the file, or the flag on the command line. */
function namer(use: SecretUse): string {
  if (use.file && !use.originOnly) return `${use.file.flag} ${use.file.path}`;
  return 'apiKey' in use.place ? '--api-key-env' : 'query' in use.place ? '--query-env' : '--header-env';
}

/** Where the value goes, in words: "in the header X-Api-Key", "in the query (key)", "as the API key". */
export function placeText(read: SecretRead): string {
  if ('header' in read.place) return `in the header ${read.place.header}`;
  if ('query' in read.place) return `in the query (${read.place.query})`;
  return 'as the API key';
}

/** The origin as people read it: the host for https, the whole origin for plain http. */
export function originText(origin: string): string {
  return origin.startsWith('https://') ? origin.slice('https://'.length) : origin;
}

/** Refuses (exit 2) a variable that no target may read, or one bound to another origin: words, no value. */
export function checkOwners(uses: readonly SecretUse[], origin: string): void {
  for (const use of uses) {
    const refusal = variableRefusal(use.variable, origin);
    if (refusal) throw new UsageError(`${namer(use)} names ${use.variable} to send ${placeText(use)} to ${origin}: ${refusal} Nothing was sent.`);
  }
}

/** One line per variable: which origin it goes to, and where. Said on stderr before anything is sent. */
export function useLines(uses: readonly SecretUse[], origin: string): string[] {
  return uses.map((use) => `${use.variable} → ${originText(origin)}, ${placeText(use)}`);
}

// A variable's value while its place is looked for: control characters, which no variable's name holds.
const MARK = '\u0001';
const MARKED = new RegExp(`${MARK}([A-Za-z_][A-Za-z0-9_]*)${MARK}`, 'g');

/**
 * The variables a curl command reads and where each goes (a header by its name, a query parameter), read with
 * each variable standing for itself: no value is read here.
 */
export function curlReads(text: string): SecretRead[] {
  const request = readCurl(text, { variable: (name) => `${MARK}${name}${MARK}` });
  const reads: SecretRead[] = [];
  const add = (found: string, place: SecretRead['place']) => {
    for (const m of found.matchAll(MARKED)) if (!reads.some((r) => r.variable === m[1] && placeText(r) === placeText({ variable: '', place }))) reads.push({ variable: m[1]!, place });
  };
  for (const [header, value] of Object.entries({ ...request.headers, ...request.secretHeaders })) {
    // -u user:$PW is sent as Basic base64(user:value): its variables are inside the encoding.
    // Read as written too: `Authorization: Basic $VAR` holds the variable itself, not inside an encoding.
    add(value, { header });
    const basic = /^Basic\s+(\S+)$/i.exec(value)?.[1];
    if (basic) add(Buffer.from(basic, 'base64').toString('utf8'), { header });
  }
  // The reader keeps a parameter with a variable apart (secretQuery); one it left in the URL is read there too.
  for (const [name, value] of Object.entries(request.secretQuery)) add(safeDecode(value), { query: name });
  const query = request.url.split('#')[0]!.split('?').slice(1).join('?');
  for (const pair of query.split('&')) {
    const at = pair.indexOf('=');
    if (at > 0) add(safeDecode(pair.slice(at + 1)), { query: pair.slice(0, at) });
  }
  return reads;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
