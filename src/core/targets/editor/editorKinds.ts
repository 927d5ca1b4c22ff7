// The kinds only the editor runs: a chat model of VS Code's Language Model API (served by a window), and manual
// answers written in the review editor. Their descriptors are the core's, like every kind's; the editor serves them.
import type { KindBase } from '../kinds/kind';
import { defineKind } from '../kinds/kind';

export const chatModelKind = defineKind({
  type: 'vscode-lm',
  summary: "a chat model of VS Code's Language Model API (the editor only)",
  picks: [{ id: 'vscode-lm', label: 'VS Code chat model', description: 'a model from the Language Model API' }],
  keys: [{ name: 'model', type: 'string', only: 'settings', description: 'a chat model id (default: any chat model)' }],
  editorOnly: true,
  identity: (spec) => ({ description: `vscode-lm: ${spec.model ?? 'any chat model'}`, parts: [spec.model], facts: { model: spec.model ?? 'any chat model' } }),
  create(spec, _secrets, options) {
    if (!options.lm) throw new TypeError('The VS Code chat model target exists only in the editor.');
    return options.lm(spec.model);
  },
});

/** No model: the user writes each answer in the review editor. */
export const manualKind: KindBase<'manual'> = {
  type: 'manual',
  summary: 'you write each answer in the review editor (the editor only)',
  picks: [{ id: 'manual', label: 'Manual', description: 'you write each answer in the review editor' }],
  keys: [],
  editorOnly: true,
};
