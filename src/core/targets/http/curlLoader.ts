import type * as CurlReader from './curlRequest';

/**
 * The curl reader, loaded on first use: only Select Target's "HTTP request from curl…" needs it, so in the
 * extension it is a file of its own (dist/curlRequest.js) that activation does not load. The CLI bundles it.
 */
export function curlReader(): typeof CurlReader {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./curlRequest') as typeof CurlReader;
}
