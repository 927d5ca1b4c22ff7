// The kinds with nothing to set up: echo, and the editor's own (a VS Code chat model, manual answers).
import { createEchoTarget } from '../echo/echoTarget';
import type { KindBase } from './kind';
import { defineKind } from './kind';

export const echoKind = defineKind({
  type: 'echo',
  summary: 'answers with the prompt itself (for trying things out)',
  picks: [{ id: 'echo', label: 'Echo', description: 'answers with the prompt (for trying things out)' }],
  keys: [],
  identity: () => ({ description: 'echo', parts: [], facts: {} }),
  create: () => createEchoTarget(),
});

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
