// --allow-env NAME or NAME=ORIGIN: what the command line allows a file to send. NAME alone lets a file send the
// variable wherever the file points; NAME=ORIGIN pins it to that origin, so a later edit of the file (a pull
// request changing its URL) cannot move the secret elsewhere without the person running the CLI seeing it.
import { UsageError } from './exitCodes';

/** One --allow-env: the variable, and the origin it is allowed to (none: any origin the file names). */
export interface EnvAllowance {
  variable: string;
  origin?: string;
}

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const FORM = 'give NAME or NAME=ORIGIN, e.g. --allow-env MY_KEY=https://api.example.com (a bare host means https)';

/** The origin an --allow-env names: scheme, host and port only; a bare host (api.example.com[:port]) is https. */
function originOfAllowance(text: string, flag: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text.includes('://') ? text : `https://${text}`);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) {
    throw new UsageError(`${flag}: the origin is not an http:// or https:// address; ${FORM}.`);
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) {
    throw new UsageError(`${flag}: the origin is a scheme, a host and a port only, without a user, path or query; ${FORM}.`);
  }
  return url.origin;
}

/** Reads each --allow-env value; a bad one is a usage error (exit 2) with the form to use. */
export function parseAllowEnv(values: readonly string[]): EnvAllowance[] {
  return values.map((value) => {
    const at = value.indexOf('=');
    const variable = (at < 0 ? value : value.slice(0, at)).trim();
    // Not quoted back: a value put here by mistake may be a secret.
    if (!VARIABLE.test(variable)) throw new UsageError(`--allow-env: one value does not start with a variable's name (letters, digits and _, not starting with a digit); ${FORM}.`);
    if (at < 0) return { variable };
    const origin = value.slice(at + 1).trim();
    if (!origin) throw new UsageError(`--allow-env ${variable}=: the origin is missing; ${FORM}.`);
    return { variable, origin: originOfAllowance(origin, `--allow-env ${variable}`) };
  });
}

/** Whether two names are the same variable: exact by default; the token's is compared whatever its case (Windows). */
export type SameVariable = (a: string, b: string) => boolean;

/**
 * Whether the command line allows `variable` to go to `origin`: true for NAME, or NAME=ORIGIN of this origin;
 * false when it is not named (ask, or refuse); a usage error (exit 2) when it is allowed to other origins only,
 * naming both. `sending` says what would send it where, completing "… but …".
 */
export function allowedByFlag(allowEnv: readonly string[], variable: string, origin: string, sending: string, same: SameVariable = (a, b) => a === b): boolean {
  const mine = parseAllowEnv(allowEnv).filter((a) => same(a.variable, variable));
  if (mine.some((a) => a.origin === undefined || a.origin === origin)) return true;
  if (mine.length === 0) return false;
  const allowed = mine.map((a) => a.origin!).join(', ');
  throw new UsageError(
    `--allow-env allows ${variable} to go to ${allowed} only, but ${sending} ${origin}. Nothing was sent. ` +
      `If ${origin} is meant, allow it with --allow-env ${variable}=${origin}; otherwise check what changed the file.`,
  );
}
