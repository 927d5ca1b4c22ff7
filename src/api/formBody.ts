import { randomBytes } from 'node:crypto';
import type { RequestEncoding } from './evaluationKinds';

export interface EncodedForm {
  body: string | Buffer;
  contentType: string;
}

/**
 * Encodes form fields so that every character of every value survives: no newline normalisation
 * (undici's FormData rewrites \n to \r\n in multipart values, so multipart is written here by hand).
 */
export function encodeForm(fields: ReadonlyArray<readonly [string, string]>, encoding: RequestEncoding): EncodedForm {
  if (encoding === 'urlencoded') {
    const params = new URLSearchParams();
    for (const [name, value] of fields) params.append(name, value);
    return { body: params.toString(), contentType: 'application/x-www-form-urlencoded' };
  }
  let boundary = newBoundary();
  while (fields.some(([, value]) => value.includes(boundary))) boundary = newBoundary();
  let text = '';
  for (const [name, value] of fields) {
    text += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  text += `--${boundary}--\r\n`;
  return { body: Buffer.from(text, 'utf8'), contentType: `multipart/form-data; boundary=${boundary}` };
}

function newBoundary(): string {
  return `----EvalRunnerBoundary${randomBytes(16).toString('hex')}`;
}
