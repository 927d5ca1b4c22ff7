import { createHash } from 'node:crypto';
import type { Target } from './target';
import { kindOf } from './kinds/index';
import type { TargetIdentity, TargetOptions, TargetSecrets, TargetSpec } from './kinds/specs';

export type { BatchLimits, SecretSources, TargetConfig, TargetIdentity, TargetOptions, TargetSecrets, TargetSpec, TargetType } from './kinds/specs';

/** The one place a target is built from a spec, for the CLI, the extension and the tests (each kind's factory). */
export function createTarget(spec: TargetSpec, secrets: TargetSecrets, options: TargetOptions): Target {
  return kindOf(spec.type).create(spec, secrets, options);
}

/** `cwd`: where a python target's relative file is read from (its content's hash is part of the identity). */
export function targetIdentity(spec: TargetSpec, cwd?: string): TargetIdentity {
  const { description, parts, facts, aliasParts } = kindOf(spec.type).identity(spec, cwd);
  return {
    description,
    fingerprint: fingerprintOf([spec.type, ...parts]),
    facts: shownFacts({ kind: spec.type, ...facts }),
    ...(aliasParts ? { aliases: [fingerprintOf([spec.type, ...aliasParts])] } : {}),
  };
}

/** The facts that are set, each at most 80 characters (a longer one: its start and a hash of the whole). */
function shownFacts(facts: Record<string, string | number | undefined>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(facts)) {
    if (value === undefined) continue;
    const text = String(value);
    shown[name] = text.length <= 80 ? text : `${text.slice(0, 60)}… (sha256 ${createHash('sha256').update(text).digest('hex').slice(0, 8)})`;
  }
  return shown;
}

/** The facts that differ between two identities, in words ("file's content: cd61be → 9a0b11"). */
export function identityDifferences(before: Readonly<Record<string, string>>, now: Readonly<Record<string, string>>): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(now)])];
  return names.filter((n) => before[n] !== now[n]).map((n) => `${n}: ${before[n] ?? '(not set)'} → ${now[n] ?? '(not set)'}`);
}

function fingerprintOf(parts: ReadonlyArray<string | number | undefined>): string {
  return createHash('sha256').update(JSON.stringify(parts.map((p) => p ?? null))).digest('hex').slice(0, 16);
}

/**
 * Runs recorded before runs had identities name their target only by a short description. Only "echo" says
 * all there is to say; any other is a target of unknown settings, never the same as one named now.
 */
export function legacyFingerprint(description: string | undefined): string {
  return description === 'echo' ? targetIdentity({ type: 'echo' }).fingerprint : `legacy:${description ?? 'unknown'}`;
}
