import { TargetError } from '../target';
import { pickPath } from '../targetHttp';

type JsonPathLib = typeof import('jsonpath-rfc9535');
let lib: JsonPathLib | undefined;

/**
 * RFC 9535 JSONPath comes from a maintained library (jsonpath-rfc9535, which passes the standard's compliance
 * suite), loaded on first use: the extension's bundle keeps it in a file of its own (dist/jsonpath.js), so
 * activation never pays for it.
 */
function jsonPathLib(): JsonPathLib {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  lib ??= require('jsonpath-rfc9535') as JsonPathLib;
  return lib;
}

/** A path into an endpoint's JSON: RFC 9535 JSONPath when it starts with `$`, else the dotted form (a.0.b). */
export interface AnswerPath {
  readonly expression: string;
  /** The one value the path selects; undefined when it selects nothing; a TargetError when it selects several. */
  pick(value: unknown, what: string): unknown;
}

export function compilePath(expression: string): AnswerPath {
  const text = expression.trim();
  if (!text.startsWith('$')) return { expression: text, pick: (value) => pickPath(value, text) };
  const { query } = jsonPathLib();
  try {
    query({}, text);
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 200) : String(error);
    throw new TypeError(`The JSONPath "${text}" is not valid RFC 9535 JSONPath (${detail}).`);
  }
  return {
    expression: text,
    pick(value, what) {
      const values = query(value as Parameters<typeof query>[0], text);
      if (values.length > 1) {
        throw new TargetError(`${what}'s answer has ${values.length} values at "${text}"; the path must select exactly one`, 'failed', {
          retryable: false,
          cause: 'path selects several values',
        });
      }
      return values[0];
    },
  };
}
