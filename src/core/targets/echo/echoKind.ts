// The echo kind: answers with the prompt itself, nothing to set up (the demo, tests and benchmarks).
import { createEchoTarget } from './echoTarget';
import { defineKind } from '../kinds/kind';

export const echoKind = defineKind({
  type: 'echo',
  summary: 'answers with the prompt itself (for trying things out)',
  picks: [{ id: 'echo', label: 'Echo', description: 'answers with the prompt (for trying things out)' }],
  keys: [],
  identity: () => ({ description: 'echo', parts: [], facts: {} }),
  create: () => createEchoTarget(),
});
