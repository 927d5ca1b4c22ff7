// eval-runner pause, resume and set --concurrency N: steer the run of one journal while it goes on, whoever started it
// (a CLI run in another terminal, the editor's runner). Exit 0 once the run acknowledged; 2 in words otherwise.
import { journalPath, MAX_STEERED_CONCURRENCY } from '../core';
import { findRunner } from '../protocol/runnerFiles';
import { SteerError, steerRun } from '../protocol/steerClient';
import type { Steer } from '../protocol/steerClient';
import type { SteerResult } from '../protocol/runnerTypes';
import { intOption, parseCommandArgs } from './args';
import { CONFIG_HELP, SERVICE_HELP, SERVICE_OPTIONS, serviceArgs, stateDirOf } from './common';
import type { ServiceArgs } from './common';
import { EXIT, UsageError } from './exitCodes';
import { safeText } from './terminalText';

const STEER_FLAGS = { ...SERVICE_OPTIONS, 'state-dir': { type: 'string', multiple: true } } as const;

const WHICH_RUN = `${SERVICE_HELP}
${CONFIG_HELP}
  --state-dir DIR             journal location (see "run --help"); given more than once, the one folder whose
                              evaluation is running (two running: say which)`;

export const PAUSE_HELP = `Usage: eval-runner pause --base-url URL --evaluation ID --kind K [--state-dir DIR]

Pauses the run of this evaluation, whoever started it (another terminal, the editor): the target calls in flight
finish, no new one starts, answers already given are still submitted, and the run keeps its lock. Journaled in
the run's history. "eval-runner resume" goes on.
${WHICH_RUN}

Exit codes: 0 the run acknowledged · 2 no run of this evaluation is going on, several --state-dir hold one, or the
run is of another Eval Runner version · 1 the run did not answer.
`;

export const RESUME_HELP = `Usage: eval-runner resume --base-url URL --evaluation ID --kind K [--state-dir DIR]

Resumes a paused run of this evaluation: target calls start again at its concurrency.
${WHICH_RUN}

Exit codes: as "eval-runner pause --help".
`;

export const SET_HELP = `Usage: eval-runner set --concurrency N --base-url URL --evaluation ID --kind K [--state-dir DIR]

Changes a run going on: --concurrency N target calls in flight at most from now on (1–${MAX_STEERED_CONCURRENCY}); lower, the calls
in flight finish first. Journaled in the run's history.
  --concurrency N             target calls in flight at most
${WHICH_RUN}

Exit codes: as "eval-runner pause --help".
`;

export function pauseCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  return steerCommand(argv, out, PAUSE_HELP, () => ({ action: 'pause' }));
}

export function resumeCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  return steerCommand(argv, out, RESUME_HELP, () => ({ action: 'resume' }));
}

export function setCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  return steerCommand(argv, out, SET_HELP, (v) => {
    if (v.concurrency === undefined) throw new UsageError('set needs --concurrency N (the only thing it changes).');
    return { action: 'setConcurrency', concurrency: intOption(v.concurrency, 'concurrency', 0, 1, MAX_STEERED_CONCURRENCY) };
  });
}

async function steerCommand(argv: string[], out: NodeJS.WritableStream, help: string, steerOf: (v: { concurrency?: string }) => Steer): Promise<number> {
  const flags = help === SET_HELP ? { ...STEER_FLAGS, concurrency: { type: 'string' } } as const : STEER_FLAGS;
  const v = parseCommandArgs(argv, flags) as { help?: boolean; 'state-dir'?: string[]; concurrency?: string } & Parameters<typeof serviceArgs>[0];
  if (v.help) {
    out.write(help);
    return EXIT.ok;
  }
  const args = serviceArgs(v);
  const steer = steerOf(v);
  const journal = runningJournal(args, v['state-dir']);
  let result: SteerResult;
  try {
    result = await steerRun(journal, steer);
  } catch (error) {
    if (error instanceof SteerError && error.reason !== 'failed') throw new UsageError(`${error.message}.`);
    throw error;
  }
  out.write(`${safeText(acknowledged(steer, result, args))}\n`);
  return EXIT.ok;
}

/** The journal whose run to steer: the one state folder (of those given) where this evaluation is running. */
function runningJournal(args: ServiceArgs, stateDirs: string[] | undefined): string {
  const key = { origin: new URL(args.baseUrl).origin, kind: args.kind, evaluationId: args.evaluationId };
  const dirs = stateDirs?.length ? stateDirs : [stateDirOf(undefined)];
  const journals = dirs.map((dir) => journalPath(dir, key));
  const running = journals.filter((file) => findRunner(file) !== undefined);
  const what = `${args.kind} evaluation ${args.evaluationId} at ${key.origin}`;
  if (running.length === 0) {
    throw new UsageError(`No run of ${what} is going on in ${dirs.join(', ')}: nothing to steer. Check --base-url, --evaluation, --kind and --state-dir, or start one with "eval-runner run".`);
  }
  if (running.length > 1) {
    throw new UsageError(`${what} is running in more than one of the state folders given (${running.join(', ')}): it is ambiguous which to steer. Give the one --state-dir.`);
  }
  return running[0]!;
}

function acknowledged(steer: Steer, result: SteerResult, args: ServiceArgs): string {
  const at = result.concurrency === undefined ? 'its own concurrency once it calls the target' : `concurrency ${result.concurrency}`;
  const which = `${args.kind} evaluation ${args.evaluationId}`;
  switch (steer.action) {
    case 'pause':
      return `Paused the run of ${which}: the calls in flight finish, no new one starts, and it keeps its lock. "eval-runner resume" goes on.`;
    case 'resume':
      return `Resumed the run of ${which} at ${at}.`;
    case 'setConcurrency':
      return `The run of ${which} now keeps at most ${steer.concurrency} target call(s) in flight${result.paused ? ' once resumed (it is paused)' : ''}.`;
  }
}
