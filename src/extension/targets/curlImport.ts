// What Select Target's "HTTP request from curl…" does with a pasted command: which values go to secret storage and
// which to settings. No vscode import: the decisions are tested on Node, with the core's reader. Nothing of the core
// is imported but types: the reader is handed in (dist/curlRequest.js, loaded on first use).
import type { CurlRequest, CurlVariable, curlReader } from '../../core';
import type { TargetSettings } from '../settings/settingsModel';

type Reader = Pick<ReturnType<typeof curlReader>, 'isPlainHeader'>;

/** A value the import keeps in secret storage, under the endpoint's origin. */
export interface StoredSecret {
  in: 'header' | 'query';
  name: string;
  value: string;
}

export interface CurlImport {
  /** What goes to settings: names of secret headers and query parameters, never a value. */
  target: Extract<TargetSettings, { type: 'http' }>;
  origin: string;
  secrets: StoredSecret[];
  /** For the user before anything is saved: "X-Api-Key → api.example.com, in secret storage". */
  destinations: string[];
  /** Query parameters written with their value in the command (not a variable) that were moved all the same. */
  movedQuery: string[];
}

/**
 * Why a command's variables cannot be read here, or undefined. Variables in headers and the URL's query become
 * secrets; one in the URL's address or the body would be written into settings (the body template is journaled).
 */
export function curlVariableProblem(variables: readonly CurlVariable[]): { name: string; in: 'url' | 'body' } | undefined {
  const found = variables.find((v) => v.in === 'url' || v.in === 'body');
  return found && { name: found.name, in: found.in as 'url' | 'body' };
}

/**
 * The settings and secrets of a command read with its variables' values: every header but a few plain ones
 * (content-type, accept, user-agent, …) is secret, so a credential under an innocent name is not saved as a plain
 * header; the query parameters the reader set apart (a variable, or a credential's name) are secret too.
 */
export function curlImport(reader: Reader, request: CurlRequest, bodyTemplate: string, answerPath: string, queryVariables: readonly string[]): CurlImport {
  const { isPlainHeader } = reader;
  const origin = new URL(request.url).origin;
  const host = new URL(request.url).host;
  const all = { ...request.headers, ...request.secretHeaders };
  const plain = Object.fromEntries(Object.entries(all).filter(([name]) => isPlainHeader(name)));
  const secrets: StoredSecret[] = [
    ...Object.entries(all)
      .filter(([name]) => !isPlainHeader(name))
      .map(([name, value]): StoredSecret => ({ in: 'header', name, value })),
    ...Object.entries(request.secretQuery).map(([name, value]): StoredSecret => ({ in: 'query', name, value })),
  ];
  const secretHeaders = secrets.filter((s) => s.in === 'header').map((s) => s.name);
  const secretQuery = secrets.filter((s) => s.in === 'query').map((s) => s.name);
  return {
    origin,
    target: {
      type: 'http',
      url: request.url,
      ...(request.method !== 'POST' ? { method: request.method } : {}),
      ...(Object.keys(plain).length > 0 ? { headers: plain } : {}),
      ...(secretHeaders.length > 0 ? { secretHeaders } : {}),
      ...(secretQuery.length > 0 ? { secretQuery } : {}),
      bodyTemplate,
      answerPath,
    },
    secrets,
    destinations: secrets.map((s) => `${s.in === 'query' ? `?${s.name}=` : s.name} → ${host}, in secret storage`),
    movedQuery: secretQuery.filter((name) => !queryVariables.includes(name)),
  };
}

/** The query parameters of a command (as written) that use a variable: they are the ones asked for as query values. */
export function queryVariableNames(shape: CurlRequest): string[] {
  return Object.entries(shape.secretQuery)
    .filter(([, value]) => /\$\{?[A-Za-z_]|%[A-Za-z_][A-Za-z0-9_]*%/.test(value))
    .map(([name]) => name);
}
