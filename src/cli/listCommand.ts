// `eval-runner list`: every evaluation the state folders hold, from their journals alone (no network, no token).
import { listEvaluations } from '../core';
import type { ListedEvaluation } from '../core';
import { parseCommandArgs } from './args';
import type { OptionSpec } from './args';
import { stateDirOf } from './common';
import { EXIT } from './exitCodes';
import { safeJson, safeText } from './terminalText';

/** The flags, each with its help: parsing and --help both come from here. */
const LIST_OPTIONS = {
  'state-dir': { type: 'string', multiple: true, value: 'DIR', help: 'a state folder to look in (default: the one "run" uses); again for each folder' },
  json: { type: 'boolean', help: 'one JSON object: {"evaluations": [...]}' },
} as const;

export const LIST_HELP = `Usage: eval-runner list [--state-dir DIR …] [--json]

Every evaluation in the state folders, from their journals (no network, no token): its service, kind and id, its
traces (submitted, failed), its last run (id, when, outcome) and whether a run is going on now.
${Object.entries(LIST_OPTIONS)
  .map(([name, o]) => `  ${`--${name}${'value' in o ? ` ${o.value}` : ''}`.padEnd(28)}${o.help}`)
  .join('\n')}
`;

export async function listCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const options = Object.fromEntries(Object.entries(LIST_OPTIONS).map(([name, o]) => [name, { type: o.type, ...('multiple' in o ? { multiple: o.multiple } : {}) }])) as OptionSpec;
  const v = parseCommandArgs(argv, options) as { help?: boolean; json?: boolean; 'state-dir'?: string[] };
  if (v.help) {
    out.write(LIST_HELP);
    return EXIT.ok;
  }
  const dirs = v['state-dir']?.length ? v['state-dir'] : [stateDirOf(undefined)];
  const listed = await listEvaluations(dirs);
  if (v.json) out.write(`${safeJson(JSON.stringify({ evaluations: listed }))}\n`);
  else if (!listed.length) out.write(`No evaluation in ${dirs.join(', ')} yet. Run one with "eval-runner run" (or try "eval-runner demo"), or give --state-dir where your journals are.\n`);
  else for (const e of listed) out.write(`${safeText(listedLine(e))}\n`);
  return EXIT.ok;
}

/** "benchmark 1 at http://127.0.0.1:8787: 25 trace(s), 22 submitted, 3 failed · 1 run, last 2026…-c6b0 (2026-11-26 17:14:22) failedTraces". */
function listedLine(e: ListedEvaluation): string {
  const counts = `${e.traces} trace(s), ${e.submitted} submitted, ${e.failed} failed`;
  const last = e.lastRun ? ` · ${e.runs} run(s), last ${e.lastRun.runId} (${e.lastRun.startedAt.replace('T', ' ').slice(0, 19)}) ${e.lastRun.outcome}` : ' · no run yet';
  return `${e.kind} ${e.evaluationId} at ${e.origin}: ${counts}${last}${e.running ? ' · a run is going on now' : ''}`;
}
