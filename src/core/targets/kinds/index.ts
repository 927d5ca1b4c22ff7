// The registry of target kinds: the one list every front end derives its kinds from (see ./kind.ts).
import type { KindBase, TargetKind } from './kind';
import { httpKind } from '../http/httpKind';
import { commandKind } from '../command/commandKind';
import { pythonKind, workerKind } from '../python/pythonKind';
import { openaiKind } from '../openai/openaiKind';
import { echoKind } from '../echo/echoKind';
import { chatModelKind, manualKind } from '../editor/editorKinds';
import type { TargetConfig, TargetSpec, TargetType } from './specs';

/** Every kind that answers, by type. */
export const TARGET_KINDS: { readonly [T in TargetSpec['type']]: TargetKind<T> } = {
  echo: echoKind,
  openai: openaiKind,
  http: httpKind,
  command: commandKind,
  python: pythonKind,
  worker: workerKind,
  'vscode-lm': chatModelKind,
};

/** Every kind a user can choose, in the order they are offered (Select Target, the CLI's help, the settings' schema). */
export const ALL_KINDS: readonly KindBase[] = [...Object.values(TARGET_KINDS), manualKind];

/** The kinds the CLI and config files take (the others exist only in the editor). */
export const CLI_KINDS: ReadonlyArray<TargetKind> = Object.values(TARGET_KINDS).filter((k) => !k.editorOnly) as TargetKind[];

export function kindOf<T extends TargetSpec['type']>(type: T): TargetKind<T> {
  return TARGET_KINDS[type];
}

export function isTargetType(type: unknown): type is TargetType {
  return ALL_KINDS.some((k) => k.type === type);
}

/** What decides the answers: the config without where its secrets come from; undefined for the manual target. */
export function specOf(config: TargetConfig): TargetSpec | undefined {
  if (config.type === 'manual') return undefined;
  const secret = new Set(kindOf(config.type).keys.filter((k) => k.secretSource).map((k) => k.name));
  return Object.fromEntries(Object.entries(config).filter(([name]) => !secret.has(name))) as TargetSpec;
}

/** "a, b or c" */
export function orList(words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]!}`;
}
