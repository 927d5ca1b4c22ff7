import type { Target } from '../target';

/** Answers with the prompt itself, every character: for the demo, tests and benchmarks. */
export function createEchoTarget(): Target {
  return { description: 'echo', send: (prompt) => Promise.resolve(prompt) };
}
