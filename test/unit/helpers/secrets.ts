import { readdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

/** Every file under dir, except under the folders in skip (absolute paths). */
export function filesUnder(dir: string, skip: ReadonlySet<string> = new Set()): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return skip.has(path) ? [] : filesUnder(path, skip);
    return e.isFile() ? [path] : [];
  });
}

/**
 * A sandbox intercept for peers that quote credentials back: the service answers the third submission with a
 * 400 quoting its Authorization header, the model endpoint answers its first two calls with 401s quoting the
 * header and the key. The secrets tests (CLI and editor) check those words arrive redacted, nowhere verbatim.
 */
export function credentialEchoes(key: string): {
  intercept: (req: IncomingMessage, res: ServerResponse) => boolean;
  echoed: { token: number; key: number };
} {
  const echoed = { token: 0, key: 0 };
  let submissions = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  return {
    echoed,
    intercept: (req, res) => {
      if (req.method === 'POST' && req.url?.startsWith('/api/evaluation/') && ++submissions === 3) {
        echoed.token++;
        json(res, 400, { code: 'req_echo', message: `Rejected request with header ${req.headers.authorization}`, data: null, success: false });
        return true;
      }
      if (req.url === '/v1/chat/completions' && echoed.key < 2) {
        echoed.key++;
        json(res, 401, { error: { message: `Incorrect API key provided: ${req.headers.authorization} (key ${key})` } });
        return true;
      }
      return false;
    },
  };
}
