// compare_runs: two runs of one evaluation trace by trace, from the journal (Compare Runs' data, session.compare).
import * as z from 'zod/mini';
import type { ComparedTrace, RunInfo, TraceStore } from '../core';
import { about, capped, EVALUATION_INPUT, int, keyOf, noJournal, ORIGIN_INPUT, PAGE, readSession, result, text, tool, ToolError } from './toolKit';


export const compareRunsTool = tool({
  name: 'compare_runs',
  title: 'Compare runs',
  description:
    "Compares two runs of one evaluation trace by trace, from the journal: how many answers differ, which traces newly answer with an error in the later run (worse) or no longer do (fixed), and a page of the differing traces with both answers cut short and each run's verdict. By default the last two runs. Use it after a rerun or a changed target to see what got better or worse; get_trace reads one trace in full.",
  input: z.strictObject({
    ...EVALUATION_INPUT,
    ...ORIGIN_INPUT,
    runA: z.optional(text(100, 'The earlier run (default: the one before the last).')),
    runB: z.optional(text(100, 'The later run (default: the last).')),
    onlyDiffering: z._default(about(z.boolean(), 'List only traces whose answers differ.'), true),
    maxChars: z._default(int(1, 4000, 'Characters of each answer at most (1–4000).'), 300),
    ...PAGE,
  }),
  hints: { readOnlyHint: true, openWorldHint: false },
  run: async (input, context) => {
    const key = keyOf(input, context);
    const { session, status } = await readSession(key, context);
    if (status.runs.length === 0) throw noJournal(key);
    const [a, b] = runsToCompare(status.runs, input.runA, input.runB);
    const rows = await session.compare(a.runId, b.runId);
    const tally = tallied(rows);
    const listed = input.onlyDiffering ? rows.filter((r) => r.differs) : rows;
    const page = listed.slice(input.offset, input.offset + input.limit).map((r) => comparedRow(r, a.runId, b.runId, session.store, input.maxChars));
    const nextOffset = input.offset + page.length < listed.length ? input.offset + page.length : null;
    const text = [
      `Run ${a.runId} (${a.target}) against run ${b.runId} (${b.target}): ${rows.length} trace(s), ${tally.differing} differ; ${tally.worse.length} newly answer with an error, ${tally.fixed.length} no longer do.`,
      tally.worse.length ? `Worse: ${tally.worse.slice(0, 20).join(', ')}${tally.worse.length > 20 ? ', …' : ''}` : '',
      ...page.map((r) => `${r.traceId}: A ${r.a.text === null ? '(no answer)' : JSON.stringify(r.a.text)} | B ${r.b.text === null ? '(no answer)' : JSON.stringify(r.b.text)}`),
      nextOffset !== null ? `More: offset ${nextOffset}.` : '',
    ].filter(Boolean).join('\n');
    const runOf = (r: RunInfo) => ({ runId: r.runId, target: r.target, startedAt: new Date(r.startedAt).toISOString(), outcome: r.outcome ?? null });
    return result(text, { evaluation: key, runA: runOf(a), runB: runOf(b), traces: rows.length, differing: tally.differing, worse: tally.worse.slice(0, 1000), fixed: tally.fixed.slice(0, 1000), rows: page, nextOffset });
  },
});

function runsToCompare(runs: readonly RunInfo[], runA: string | undefined, runB: string | undefined): [RunInfo, RunInfo] {
  const find = (id: string) => {
    const run = runs.find((r) => r.runId === id);
    if (!run) throw new ToolError(`No run "${id.slice(0, 100)}" in this evaluation: get_run_status gives the last run's id, list_evaluations each evaluation's.`);
    return run;
  };
  const b = runB !== undefined ? find(runB) : runs[runs.length - 1]!;
  const a = runA !== undefined ? find(runA) : runs.filter((r) => r !== b).pop();
  if (!a) throw new ToolError('This evaluation has one run: compare_runs needs two. Start another with start_run or rerun_traces.');
  return [a, b];
}

/** Differing answers, and the traces whose answer became (worse) or stopped being (fixed) an error text. */
function tallied(rows: readonly ComparedTrace[]): { differing: number; worse: string[]; fixed: string[] } {
  const worse: string[] = [];
  const fixed: string[] = [];
  let differing = 0;
  for (const r of rows) {
    if (r.differs) differing++;
    // A trace the later run did not answer (a rerun of others) is neither: only answers are compared.
    if (!r.b) continue;
    if (r.a && !r.a.errorAnswer && r.b.errorAnswer) worse.push(r.traceId);
    else if ((!r.a || r.a.errorAnswer) && !r.b.errorAnswer) fixed.push(r.traceId);
  }
  return { differing, worse, fixed };
}

function comparedRow(r: ComparedTrace, runA: string, runB: string, store: TraceStore, max: number) {
  const side = (answer: ComparedTrace['a'], run: string) => ({ ...capped(answer?.answer, 0, max), errorAnswer: answer?.errorAnswer ?? false, verdict: store.verdictOf(run, r.traceId)?.rating ?? null });
  return { traceId: r.traceId, differs: r.differs, a: side(r.a, runA), b: side(r.b, runB) };
}
