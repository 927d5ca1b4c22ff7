import { looksSecretQueryName } from './querySecrets';

/**
 * A pasted URL's query split in two: the parameters that carry a secret (those whose value used a variable, and
 * those whose name says they hold a credential) with their values, and the URL without them. Worked on the text, so
 * a URL whose variables are still as written ($HOST) splits the same.
 */
export function splitSecretQuery(url: string, variableNames: readonly string[]): { url: string; secretQuery: Record<string, string> } {
  const hash = url.indexOf('#');
  const [base, fragment] = hash < 0 ? [url, ''] : [url.slice(0, hash), url.slice(hash)];
  const mark = base.indexOf('?');
  if (mark < 0) return { url, secretQuery: {} };
  const withVariables = new Set(variableNames.map(decodedName));
  const kept: string[] = [];
  const secretQuery: Record<string, string> = {};
  for (const pair of base.slice(mark + 1).split('&')) {
    const [name, value] = [...new URLSearchParams(pair)][0] ?? ['', ''];
    if (pair.includes('=') && (withVariables.has(name) || looksSecretQueryName(name))) secretQuery[name] = value;
    else kept.push(pair);
  }
  const query = kept.filter((pair) => pair !== '').join('&');
  return { url: `${base.slice(0, mark)}${query ? `?${query}` : ''}${fragment}`, secretQuery };
}

function decodedName(raw: string): string {
  return [...new URLSearchParams(`${raw}=`)][0]?.[0] ?? raw;
}
