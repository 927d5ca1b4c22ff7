// Who an environment variable's secret belongs to. The service token is the service's alone; a provider's
// conventional key variable is that provider's API's alone. This table is the one place such bindings live: the
// CLI's secret sources (flags, config files, curl files) are checked against it before any value is read.
import { OPENAI_API_ORIGIN } from './openai/openaiTarget';

/** The service token's variable: never a target's secret, whatever names it. */
export const SERVICE_TOKEN_ENV = 'EVAL_RUNNER_TOKEN';

/**
 * Variables each provider's own documentation names for its key, bound to that provider's API origin: a key
 * meant for one provider never reaches whatever endpoint a file or flag points at (a proxy, a typo, an attacker).
 * Only bindings that are certain: a variable shared by several services (GITHUB_TOKEN, GOOGLE_API_KEY) is not here.
 */
export const BOUND_VARIABLES: Readonly<Record<string, string>> = {
  OPENAI_API_KEY: OPENAI_API_ORIGIN,
  ANTHROPIC_API_KEY: 'https://api.anthropic.com',
  MISTRAL_API_KEY: 'https://api.mistral.ai',
};

/** A URL's origin (scheme, host, port), or undefined for a URL that cannot be read. */
export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

// Windows reads variables whatever their case: eval_runner_token is the token there.
const canonical = (variable: string) => variable.toUpperCase();

/** The origin a rule binds this variable to, if any. */
export function boundOrigin(variable: string): string | undefined {
  return BOUND_VARIABLES[canonical(variable)];
}

/** The variable bound to this origin (the key its provider's documentation names), if any. */
export function variableBoundTo(origin: string | undefined): string | undefined {
  return Object.keys(BOUND_VARIABLES).find((name) => BOUND_VARIABLES[name] === origin);
}

/**
 * Why `variable` may not be read as a secret sent to `origin`, in words that name the variable and never a
 * value; undefined when it may.
 */
export function variableRefusal(variable: string, origin: string): string | undefined {
  if (canonical(variable) === SERVICE_TOKEN_ENV) {
    return `${variable} holds the service's token, which goes to the service only, never to a target. Put the target's key in a variable of its own.`;
  }
  const bound = boundOrigin(variable);
  if (bound !== undefined && bound !== origin) {
    return `${variable} is ${bound}'s key and goes there only, not to ${origin}. Put this endpoint's key in a variable of its own.`;
  }
  return undefined;
}
