import { costText, describeStats, EvaluationSession, totalCost, holdText, journalPath, JournalLockedError, listJournals, LOCAL_STATES, runStats, skippedNote, STATE_LABELS, steersJson, steersText, windowsText } from '../core';
import type { RunInfo, WindowEvents } from '../core';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import { truncate } from '../api/errors';
import { choiceOption, parseCommandArgs } from './args';
import { CONFIG_HELP, SERVICE_HELP, SERVICE_OPTIONS, TOKEN_HELP, clientFor, isNotFound, otherKindHint, serviceArgs, stateDirOf, tokenFromEnv, writingOut } from './common';
import type { ServiceArgs } from './common';
import { EXIT, UsageError } from './exitCodes';
import { invalidLinesNote } from './runCommand';
import { safeJson, safeText } from './terminalText';
import { TOKEN_ORIGIN_HELP, TOKEN_ORIGIN_OPTIONS, allowTokenOrigin, ownValues } from './tokenOrigin';
import type { ConfigFlags } from './configFile';

export const PROMPTS_HELP = `Usage: eval-runner prompts --base-url URL --evaluation ID --kind K [--json]

Lists the evaluation's prompts: one "traceId<TAB>preview" line each, or the full items as JSON.
${SERVICE_HELP}
${CONFIG_HELP}
${TOKEN_ORIGIN_HELP}
  --json                      print the items as one JSON array

${TOKEN_HELP}
`;

const PROMPTS_FLAGS = { ...SERVICE_OPTIONS, ...TOKEN_ORIGIN_OPTIONS, json: { type: 'boolean' } } as const;

export async function promptsCommand(argv: string[], out: NodeJS.WritableStream, config?: ConfigFlags): Promise<number> {
  const v = parseCommandArgs(argv, PROMPTS_FLAGS);
  if (v.help) return write(out, PROMPTS_HELP);
  const args = serviceArgs(v);
  const token = tokenFromEnv(args.baseUrl);
  await allowTokenOrigin(args.baseUrl, v, ownValues(argv, config, PROMPTS_FLAGS), config);
  const client = clientFor(args, token);
  try {
    const items = await client.listPrompts(args.kind, args.evaluationId).catch(async (error: unknown) => {
      if (isNotFound(error)) throw new UsageError(`${(error as Error).message}${await otherKindHint(client, args)}`);
      throw error;
    });
    if (v.json) out.write(`${safeJson(JSON.stringify(items))}\n`);
    else for (const item of items) out.write(`${safeText(`${item.traceId}\t${preview(item.content)}`)}\n`);
    return EXIT.ok;
  } finally {
    await client.close();
  }
}

export const SUBMIT_HELP = `Usage: eval-runner submit --base-url URL --evaluation ID --kind K --trace ID (--answer TEXT | --answer-file FILE)

Submits one answer for one trace, and journals it so "status" and later runs know it.
${SERVICE_HELP}
${CONFIG_HELP}
${TOKEN_ORIGIN_HELP}
  --trace ID                  the trace id, exactly as listed
  --answer TEXT               the answer
  --answer-file FILE          read the answer from a file (every byte kept; "-" for stdin)
  --state-dir DIR             journal location (see "run --help")

${TOKEN_HELP}
`;

const SUBMIT_FLAGS = {
  ...SERVICE_OPTIONS,
  ...TOKEN_ORIGIN_OPTIONS,
  trace: { type: 'string' },
  answer: { type: 'string' },
  'answer-file': { type: 'string' },
  'state-dir': { type: 'string' },
} as const;

export async function submitCommand(argv: string[], out: NodeJS.WritableStream, config?: ConfigFlags): Promise<number> {
  const v = parseCommandArgs(argv, SUBMIT_FLAGS);
  if (v.help) return write(out, SUBMIT_HELP);
  const args = serviceArgs(v);
  if (v.trace === undefined) throw new UsageError('--trace is required.');
  if ((v.answer === undefined) === (v['answer-file'] === undefined)) throw new UsageError('Give exactly one of --answer and --answer-file.');
  const answer =
    v.answer ??
    (v['answer-file'] === '-' ? await readStdin() : await readFile(v['answer-file']!, 'utf8').catch((e: Error) => {
      throw new UsageError(`Cannot read --answer-file: ${e.message}`);
    }));
  const token = tokenFromEnv(args.baseUrl);
  await allowTokenOrigin(args.baseUrl, v, ownValues(argv, config, SUBMIT_FLAGS), config);
  const client = clientFor(args, token);
  const session = new EvaluationSession({ origin: client.origin, kind: args.kind, evaluationId: args.evaluationId }, stateDirOf(v['state-dir']));
  try {
    const result = await session.submitAnswer(client, v.trace, answer);
    // The service's words, capped: a success text is not a place for a megabyte.
    const said = truncate(result.message, 300);
    out.write(`${safeText(`Submitted trace ${JSON.stringify(v.trace)}: ${said} (${result.requestCode ?? 'no request code'})`)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof JournalLockedError) throw new UsageError(error.message);
    throw error;
  } finally {
    await client.close();
  }
}

export const STATUS_HELP = `Usage: eval-runner status --base-url URL --evaluation ID --kind K [--state-dir DIR …] [--json]

Local progress of an evaluation, read from its journal (no network, no token).
${SERVICE_HELP}
${CONFIG_HELP}
  --state-dir DIR             journal location (see "run --help"); again for each shard's folder: read as one
                              evaluation, with the traces none of them has done listed
  --json                      one JSON object
`;

/** The evaluation in the first state folder, with the others (--state-dir given again: shards) read as one. */
function sessionFor(args: ServiceArgs, stateDirs: string[] | undefined): EvaluationSession {
  const [first, ...others] = stateDirs ?? [];
  const session = new EvaluationSession({ origin: new URL(args.baseUrl).origin, kind: args.kind, evaluationId: args.evaluationId }, stateDirOf(first));
  return session.readAlso(others);
}

/**
 * Status, export and report read a journal: none for this evaluation is a mistake (a mistyped --base-url, id or
 * kind), not an empty result a CI job would upload. Says which journals the state folders do hold.
 */
async function requireJournal(args: ServiceArgs, stateDirs: string[] | undefined): Promise<void> {
  const [first, ...others] = stateDirs ?? [];
  const dirs = [stateDirOf(first), ...others];
  const key = { origin: new URL(args.baseUrl).origin, kind: args.kind, evaluationId: args.evaluationId };
  // An empty journal is none: a run refused at once (a 404 for a mistyped id) leaves the file it locked, empty.
  if (dirs.some((dir) => journalSize(journalPath(dir, key)) > 0)) return;
  const there = [...new Set((await Promise.all(dirs.map(listJournals))).flat().map((j) => `${j.kind} ${j.evaluationId} at ${j.origin}`))];
  const shown = there.length > 10 ? [...there.slice(0, 10), `and ${there.length - 10} more`] : there;
  const next = there.length
    ? `Journals there: ${shown.join(', ')}. Check --base-url, --evaluation and --kind.`
    : `No journal is there at all: check --state-dir, or start with "eval-runner run".`;
  throw new UsageError(`No journal for ${args.kind} evaluation ${args.evaluationId} at ${key.origin} in ${dirs.join(', ')}. ${next}`);
}

function journalSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export async function statusCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const v = parseCommandArgs(argv, { ...SERVICE_OPTIONS, 'state-dir': { type: 'string', multiple: true }, json: { type: 'boolean' } });
  if (v.help) return write(out, STATUS_HELP);
  const args = serviceArgs(v);
  await requireJournal(args, v['state-dir']);
  const status = await sessionFor(args, v['state-dir']).status();
  if (v.json) {
    const runs = status.runs.map((r) => ({
      runId: r.runId,
      target: r.target,
      startedAt: new Date(r.startedAt).toISOString(),
      endedAt: r.endedAt === undefined ? null : new Date(r.endedAt).toISOString(),
      ...(status.interrupted.includes(r.runId) ? { interrupted: true } : {}),
      ...(r.mode ? { mode: r.mode === 'reuse' ? 'mixed' : r.mode } : {}),
      answered: r.answered,
      submitted: r.submitted,
      failed: r.failed,
      ...(r.shard ? { shard: r.shard } : {}),
      ...runStats(r),
      ...(r.listChanges ? { listChanges: r.listChanges } : {}),
      // The run's history: the service down, a pause for a token, windows of the editor that came and went.
      ...(r.holds?.length ? { holds: r.holds.map((h) => ({ ...h, from: new Date(h.from).toISOString(), to: new Date(h.to).toISOString() })) } : {}),
      ...(r.windows ? { windows: windowsJson(r.windows) } : {}),
      // Paused, resumed, concurrency set from outside (eval-runner pause, Run Details).
      ...(r.steers?.length ? { steers: steersJson(r.steers) } : {}),
    }));
    out.write(`${safeJson(JSON.stringify({ ...status, runs, cost: totalCost(status.runs) }))}\n`);
    return EXIT.ok;
  }
  const { counts } = status;
  if (status.total === 0 && status.runs.length === 0) {
    out.write(`No journal yet for ${args.kind} evaluation ${args.evaluationId} at ${args.baseUrl} (looked in ${status.journal}). Start with "eval-runner run".\n`);
    return EXIT.ok;
  }
  // Before any list (an answer submitted by hand), the traces known are not the evaluation's: no total is given.
  const submitted = status.listed ? `${counts.submitted}/${status.total} submitted` : `${counts.submitted} submitted (the prompt list is not journaled yet, so the total is unknown: "run" lists it)`;
  out.write(`${args.kind} evaluation ${args.evaluationId}: ${submitted}\n`);
  for (const state of LOCAL_STATES) out.write(`  ${STATE_LABELS[state].padEnd(18)} ${counts[state]}\n`);
  if (status.alreadyAtService) out.write(`  ${'Already there'.padEnd(18)} ${status.alreadyAtService} (the service already held an answer: 409; among Submitted)\n`);
  if (status.notAnswered) out.write(`  ${'Not answered'.padEnd(18)} ${status.notAnswered} (skipped traces submitted as not answered, among the above)\n`);
  const skipped = skippedNote(counts.skipped);
  if (skipped) out.write(`${skipped}\n`);
  for (const f of status.failed.slice(0, 20)) out.write(`${safeText(`  failed: ${JSON.stringify(f.traceId)}: ${f.reason}`)}\n`);
  if (status.runs.length) out.write(`${safeText(runsTable(status.runs, status.interrupted))}\n`);
  if (status.runs.length) out.write(`${safeText(`cost: ${costText(totalCost(status.runs))}`)}\n`);
  for (const r of status.runs) {
    const stats = runStats(r);
    const said = describeStats(stats);
    if (said) out.write(`${safeText(`  ${r.runId}: ${said}`)}\n`);
    for (const [reason, n] of Object.entries(stats.errors).slice(0, 5)) out.write(`${safeText(`    ${n} × ${reason}`)}\n`);
    for (const h of r.holds ?? []) out.write(`${safeText(`  ${r.runId}: ${holdText(h)}`)}\n`);
    const windows = windowsText(r.windows);
    if (windows) out.write(`${safeText(`  ${r.runId}: ${windows}`)}\n`);
    const steered = steersText(r.steers);
    if (steered) out.write(`${safeText(`  ${r.runId}: ${steered}`)}\n`);
  }
  if (status.invalidLines) out.write(`${invalidLinesNote(status.invalidLines, status.journal)}\n`);
  if (status.journals) {
    out.write(`read as one evaluation: ${status.journals.length} journals (${status.journals.join(', ')})\n`);
    const notDone = status.notDone ?? [];
    if (notDone.length) out.write(`${safeText(`not done by any of them: ${counts.pending} trace(s), first ${notDone.slice(0, 10).map((id) => JSON.stringify(id)).join(', ')}`)}\n`);
  } else out.write(`journal: ${status.journal}\n`);
  return EXIT.ok;
}

function windowsJson(w: WindowEvents) {
  const iso = (at: number | undefined) => (at === undefined ? null : new Date(at).toISOString());
  return { attached: w.attached, lastAttachedAt: iso(w.lastAttachedAt), detached: w.detached, lastDetachedAt: iso(w.lastDetachedAt) };
}

/** Runs, oldest first: one line each. */
function runsTable(runs: readonly RunInfo[], interrupted: readonly string[]): string {
  const time = (at: number | undefined) => (at === undefined ? '–' : new Date(at).toISOString().replace('T', ' ').slice(0, 19));
  // No end: going on now, or cut short (its process is gone).
  const ended = (r: RunInfo) => (r.endedAt !== undefined ? time(r.endedAt) : interrupted.includes(r.runId) ? 'interrupted' : 'going on');
  const kind = (r: RunInfo) => (r.mode === 'reuse' ? ' (mixed)' : r.mode === 'fresh' ? ' (fresh)' : '');
  const rows = runs.map((r) => [r.runId, time(r.startedAt), ended(r), String(r.answered), String(r.submitted), String(r.failed), `${r.target}${kind(r)}${r.shard ? ` (shard ${r.shard})` : ''}`]);
  const head = ['run', 'started', 'ended', 'answered', 'submitted', 'failed', 'target'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`;
  return ['runs:', line(head), ...rows.map(line)].join('\n');
}

export const EXPORT_HELP = `Usage: eval-runner export --base-url URL --evaluation ID --kind K --format jsonl|csv [--run RUN] [--out FILE] [--bom] [--state-dir DIR …]

Writes every journaled trace: traceId, prompt, answer, state, timings, error. No secrets are ever in it.
CSV cells that a spreadsheet would run as a formula (=, +, -, @, tab or carriage return first) start with an apostrophe.
${SERVICE_HELP}
${CONFIG_HELP}
  --format jsonl|csv
  --out FILE                  write here (owner-only, 0600) instead of stdout ("-": stdout)
  --bom                       CSV: start with a UTF-8 byte order mark, for Excel
  --run RUN                   the answers as run RUN left them, with their verdicts (its id as "status" shows it,
                              or the start of one); default: the latest run
  --state-dir DIR             journal location (see "run --help"); again for each shard's folder: one export
`;

export async function exportCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const v = parseCommandArgs(argv, {
    ...SERVICE_OPTIONS,
    format: { type: 'string' },
    out: { type: 'string' },
    bom: { type: 'boolean' },
    run: { type: 'string' },
    'state-dir': { type: 'string', multiple: true },
  });
  if (v.help) return write(out, EXPORT_HELP);
  const args = serviceArgs(v);
  const format = choiceOption(v.format, 'format', ['jsonl', 'csv'] as const);
  if (v.bom && format !== 'csv') throw new UsageError('--bom is for --format csv.');
  await requireJournal(args, v['state-dir']);
  const session = sessionFor(args, v['state-dir']);
  const options = { bom: v.bom === true, ...(v.run !== undefined ? { run: v.run } : {}) };
  // "-" is standard output, as for most command-line tools; never a file named "-".
  if (v.out && v.out !== '-') {
    const count = await writingOut(v.out, () => session.exportTo(format, v.out!, options));
    process.stderr.write(`Exported ${count} trace(s) to ${v.out}.\n`);
    return EXIT.ok;
  }
  // To stdout: JSONL with the controls JSON leaves raw escaped (the same values); CSV byte for byte into a
  // pipe, made inert when a terminal would act on it.
  const inert = format === 'jsonl' ? safeJson : (out as NodeJS.WriteStream).isTTY ? (l: string) => `${safeText(l.slice(0, -2))}\r\n` : undefined;
  for (const line of await session.exportLines(format, options)) {
    if (!out.write(inert ? inert(line) : line)) await once(out, 'drain');
  }
  return EXIT.ok;
}

function write(out: NodeJS.WritableStream, text: string): number {
  out.write(text);
  return EXIT.ok;
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const REPORT_HELP = `Usage: eval-runner report --base-url URL --evaluation ID --kind K --out FILE [--state-dir DIR …]

One self-contained HTML file a reviewer can open anywhere: per run its figures (latency p50/p95/max, tokens,
time to first token), a latency histogram and the answers over time, the runs side by side, and every trace
with search, state and verdict filters and the full text. No request leaves it: script, style and data are
inline under a strict Content-Security-Policy. Read from the journal (no network, no token).
${SERVICE_HELP}
${CONFIG_HELP}
  --out FILE                  where to write it (owner-only, like exports)
  --state-dir DIR             journal location (see "run --help"); again for each shard's folder: one report
`;

export async function reportCommand(argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const v = parseCommandArgs(argv, { ...SERVICE_OPTIONS, out: { type: 'string' }, 'state-dir': { type: 'string', multiple: true } });
  if (v.help) return write(out, REPORT_HELP);
  const args = serviceArgs(v);
  if (!v.out) throw new UsageError('--out FILE is required: where to write the report.');
  await requireJournal(args, v['state-dir']);
  const session = sessionFor(args, v['state-dir']);
  const bytes = await writingOut(v.out, () => session.writeReport(v.out!));
  process.stderr.write(`Wrote the report of ${session.store.traces.size} trace(s) and ${session.store.runs.length} run(s) to ${v.out} (${Math.round(bytes / 1024)} KB).\n`);
  return EXIT.ok;
}
