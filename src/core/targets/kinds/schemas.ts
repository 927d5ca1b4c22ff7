// The schemas derived from the kinds: a config file's `target` (zod), and `evalRunner.target` in package.json (JSON
// Schema, for the settings editor's completion and validation; scripts/targetSettings.mjs writes it).
import * as z from 'zod/mini';
import { ALL_KINDS, CLI_KINDS, isTargetType, kindOf, orList } from './index';
import type { KindBase, KindKey } from './kind';
import type { TargetConfig } from './specs';

function zodOf(key: KindKey): z.ZodMiniType {
  switch (key.type) {
    case 'string':
      return z.string();
    case 'integer':
      return z.int();
    case 'number':
      return z.number();
    case 'boolean':
      return z.boolean();
    case 'stringMap':
      return z.record(z.string(), z.string());
    case 'stringList':
      return z.array(z.string());
  }
}

/** A config file's `target`: one of the CLI's kinds, with exactly its keys. */
export function configTargetSchema(): z.ZodMiniType<Exclude<TargetConfig, { type: 'manual' | 'vscode-lm' }>> {
  const objects = CLI_KINDS.map((kind) => {
    const shape: Record<string, z.ZodMiniType> = { type: z.literal(kind.type) };
    for (const key of kind.keys.filter((k) => k.only !== 'settings')) shape[key.name] = key.required ? zodOf(key) : z.optional(zodOf(key));
    return z.strictObject(shape);
  });
  return z.discriminatedUnion('type', objects as unknown as [z.ZodMiniObject, ...z.ZodMiniObject[]]) as never;
}

/** What a config file's target.type must be, in words. */
export function configTypesText(): string {
  const editor = ALL_KINDS.filter((k) => k.editorOnly).map((k) => (k.type === 'vscode-lm' ? 'VS Code chat model' : k.type));
  return `must be ${orList(CLI_KINDS.map((k) => k.type))} (the ${orList(editor).replace(' or ', ' and ')} targets exist only in the editor)`;
}

/** `evalRunner.target` as read from the editor's settings: a known kind made regular, else echo. Lenient by design. */
export function settingsTarget(value: unknown): TargetConfig {
  const t = value as TargetConfig | undefined;
  if (!t || typeof t !== 'object' || !isTargetType(t.type)) return { type: 'echo' };
  if (t.type === 'manual') return t;
  const kind = kindOf(t.type);
  return kind.normalise ? kind.normalise(t) : t;
}

type JsonSchema = Record<string, unknown>;

function jsonSchemaOf(key: KindKey): JsonSchema {
  const types: Record<KindKey['type'], JsonSchema> = {
    string: { type: 'string' },
    integer: { type: 'integer' },
    number: { type: 'number' },
    boolean: { type: 'boolean' },
    stringMap: { type: 'object', additionalProperties: { type: 'string' } },
    stringList: { type: 'array', items: { type: 'string' } },
  };
  return { ...types[key.type], ...(key.min !== undefined ? { minimum: key.min } : {}), ...(key.max !== undefined ? { maximum: key.max } : {}) };
}

const NLS = 'configuration.target';

/** The localisable texts of the schema: package.nls.json's keys under configuration.target.<type>. */
function kindTexts(kind: KindBase, nls: Record<string, string>): JsonSchema {
  const properties: JsonSchema = { type: { const: kind.type } };
  for (const key of kind.keys.filter((k) => k.only !== 'config')) {
    const id = `${NLS}.${kind.type}.${key.name}`;
    nls[id] = sentence(key.description);
    properties[key.name] = { ...jsonSchemaOf(key), description: `%${id}%` };
  }
  const required = ['type', ...kind.keys.filter((k) => k.required).map((k) => k.name)];
  return { if: { properties: { type: { const: kind.type } }, required: ['type'] }, then: { properties, required, additionalProperties: false } };
}

function sentence(text: string): string {
  return `${text[0]!.toUpperCase()}${text.slice(1)}${text.endsWith('.') || text.endsWith(')') ? '' : '.'}`;
}

/**
 * package.json's `evalRunner.target`, derived from the kinds, and the package.nls.json texts it names. Each kind's keys
 * apply once `type` names it (if/then), so the settings editor completes and checks that kind's keys only.
 */
export function targetSettingsSchema(): { schema: JsonSchema; nls: Record<string, string> } {
  const nls: Record<string, string> = {};
  const enumDescriptions = ALL_KINDS.map((kind) => {
    const id = `${NLS}.type.${kind.type}`;
    nls[id] = sentence(kind.summary);
    return `%${id}%`;
  });
  const schema = {
    type: 'object',
    default: { type: 'echo' },
    markdownDescription: `%${NLS}.markdownDescription%`,
    required: ['type'],
    properties: { type: { type: 'string', enum: ALL_KINDS.map((k) => k.type), enumDescriptions } },
    allOf: ALL_KINDS.map((kind) => kindTexts(kind, nls)),
  };
  return { schema, nls };
}
