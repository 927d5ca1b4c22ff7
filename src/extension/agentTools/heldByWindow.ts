// What this window holds that no agent tool's answer may carry (issue 39): read from secret storage without asking
// for anything, since a read tool must not open a prompt. A secret never stored here was never sent from here, so a
// journaled answer cannot echo it.
import { heldSecrets, kindOf, sentHeaders, specOf } from '../../core';
import type { SecretSources } from '../../core';
import type { Ctx } from '../ctx';

/** The stored tokens of the window's services (the sandbox's too) and the target's stored key, secret headers and query values. */
export async function heldByWindow(ctx: Ctx): Promise<string[]> {
  const origins = [...new Set(ctx.registry.refs.filter((r) => r.source !== 'sandbox').map((r) => r.origin))].filter((o) => o !== 'unset' && o !== 'invalid');
  // The sandbox's token as it runs (reading it must not start it).
  const tokens = [...(await Promise.all(origins.map((o) => ctx.tokens.get(o)))), ctx.sandbox.sandbox?.token];
  return [...tokens.flatMap((token) => (token ? heldSecrets(token, {}) : [])), ...(await targetHeld(ctx))];
}

async function targetHeld(ctx: Ctx): Promise<string[]> {
  const t = ctx.settings.target;
  if (t.type === 'manual') return [];
  const kind = kindOf(t.type);
  const spec = specOf(t);
  if (!kind.secrets || !kind.endpoint || !spec) return [];
  const origin = new URL(kind.endpoint(spec)).origin;
  const sources = t as SecretSources & { secretQuery?: string[] };
  const stored = async (names: readonly string[], get: (name: string) => Thenable<string | undefined>) => Object.fromEntries((await Promise.all(names.map(async (n) => [n, await get(n)] as const))).filter((e): e is readonly [string, string] => e[1] !== undefined));
  const secret = await stored(sources.secretHeaders ?? [], (n) => ctx.tokens.getHeader(origin, n));
  const query = await stored(sources.secretQuery ?? [], (n) => ctx.tokens.getQuery(origin, n));
  const apiKey = await ctx.tokens.getModelKey(origin);
  return heldSecrets(undefined, { ...(apiKey ? { apiKey } : {}), headers: sentHeaders(sources.headers, secret), query });
}
