// The command kind: a shell command per prompt, the user's own program on this machine.
import { createCommandTarget } from './commandTarget';
import { defineKind } from '../kinds/kind';

export const commandKind = defineKind({
  type: 'command',
  summary: 'a shell command per prompt: prompt on stdin, answer on stdout',
  picks: [{ id: 'command', label: 'Shell command', description: 'prompt on stdin, answer on stdout' }],
  keys: [{ name: 'command', type: 'string', required: true, flag: 'command', arg: 'CMD', description: 'the command, run by /bin/sh (or %ComSpec% on Windows) once per prompt' }],
  localProcess: true,
  identity: (spec) => ({ description: `command: ${spec.command}`, parts: [spec.command], facts: { command: spec.command } }),
  create: (spec, _secrets, options) =>
    createCommandTarget({ command: spec.command, ...(options.cwd ? { cwd: options.cwd } : {}), ...(options.withhold ? { withhold: options.withhold } : {}) }),
});
