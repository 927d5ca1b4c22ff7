import type { TargetSecrets } from './kinds/specs';
import { targetSecrets } from './targetSecrets';

/**
 * Every secret a host holds for a run, as redactSecrets takes them: the service token and the target's key, header
 * values and secret query values (as sent: the query's encoding too). What an agent's tool returns is cleared of them
 * (src/tools), since a model's answer may echo whatever its request carried.
 */
export function heldSecrets(token: string | undefined, secrets: TargetSecrets): string[] {
  const headers: Record<string, string> = { ...secrets.headers };
  if (secrets.apiKey) headers['x-held-api-key'] = secrets.apiKey;
  if (token) headers['x-held-token'] = token;
  const query = Object.entries(secrets.query ?? {});
  // targetSecrets reads query values from a URL; the host is never contacted.
  const url = query.length ? `http://query.invalid/?${new URLSearchParams(query).toString()}` : undefined;
  return targetSecrets(headers, url);
}
