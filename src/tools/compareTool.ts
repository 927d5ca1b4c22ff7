// compare_runs: two runs of one evaluation trace by trace, from the journal (Compare Runs' data, session.compare).
import * as z from 'zod/mini';
import type { ComparedTrace, RunInfo, TraceStore } from '../core';
import { about, capped, EVALUATION_INPUT, idText, int, keyOf, noJournal, ORIGIN_INPUT, PAGE, pagedResult, quoted, readSession, result, shownId, text, tool, ToolError } from './toolKit';

export const compareRunsTool = tool({
  name: 'compare_runs',
  title: 'Compare runs',
  description:
    "Compares two runs of one evaluation trace by trace, from the journal: how many traces both runs answered and how many of those answers differ (and how many only one run answered, such as the traces a rerun left alone), which traces newly answer with an error in the later run (worse) or no longer do (fixed), and a page of the traces answered in both whose answers differ with both answers cut short and each run's verdict. By default the last two runs. Use it after a rerun or a changed target to see what got better or worse; get_trace reads one trace in full.",
  input: z.strictObject({
    ...EVALUATION_INPUT,
    ...ORIGIN_INPUT,
    runA: z.optional(text(100, 'The earlier run (default: the one before the last).')),
    runB: z.optional(text(100, 'The later run (default: the last).')),
    onlyDiffering: z._default(about(z.boolean(), 'List only traces both runs answered, differently (false: every trace either run answered).'), true),
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
    const listed = input.onlyDiffering ? rows.filter(answeredDifferently) : rows;
    const shown = listed.slice(input.offset, input.offset + input.limit).map((r) => comparedRow(r, a.runId, b.runId, session.store, input.maxChars, context.redact));
    const runOf = (r: RunInfo) => ({ runId: r.runId, target: r.target, startedAt: new Date(r.startedAt).toISOString(), outcome: r.outcome ?? null });
    const worse = idsWithin(tally.worse);
    const fixed = idsWithin(tally.fixed);
    return pagedResult(shown, (page) => {
      const nextOffset = input.offset + page.length < listed.length ? input.offset + page.length : null;
      const text = [
        `Run ${a.runId} (${a.target}) against run ${b.runId} (${b.target}): ${tally.both} trace(s) answered in both, ${tally.differing} of them differ; ${tally.onlyA} answered only in run A, ${tally.onlyB} only in run B. ${tally.worse.length} newly answer with an error, ${tally.fixed.length} no longer do.`,
        tally.worse.length ? `Worse: ${worse.slice(0, 20).map((traceId) => JSON.stringify(traceId)).join(', ')}${tally.worse.length > 20 ? ', …' : ''}` : '',
        ...page.map((r) => `${idText(r)}: A ${quoted(r.a.text, '(no answer)')} | B ${quoted(r.b.text, '(no answer)')}`),
        nextOffset !== null ? `More: offset ${nextOffset}.` : '',
      ].filter(Boolean).join('\n');
      const counts = { traces: rows.length, answeredInBoth: tally.both, differing: tally.differing, onlyInA: tally.onlyA, onlyInB: tally.onlyB, worseTotal: tally.worse.length, fixedTotal: tally.fixed.length };
      return result(text, { evaluation: key, runA: runOf(a), runB: runOf(b), ...counts, worse, fixed, rows: page, nextOffset });
    });
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

/** Both runs answered the trace, differently (one answer alone is a trace the other run left, not a change). */
function answeredDifferently(r: ComparedTrace): boolean {
  return r.a !== undefined && r.b !== undefined && r.differs;
}

/** The worse or fixed ids a result lists: each shown (cut at MAX_ID), at most 100,000 characters in all. */
function idsWithin(ids: readonly string[]): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const id of ids) {
    const { traceId } = shownId(id);
    if ((chars += traceId.length) > 100_000 || out.length === 1000) break;
    out.push(traceId);
  }
  return out;
}

/** Traces answered in both runs and in one alone, differing answers, and the traces whose answer became (worse) or stopped being (fixed) an error text. */
function tallied(rows: readonly ComparedTrace[]): { both: number; differing: number; onlyA: number; onlyB: number; worse: string[]; fixed: string[] } {
  const worse: string[] = [];
  const fixed: string[] = [];
  let both = 0;
  let differing = 0;
  let onlyA = 0;
  let onlyB = 0;
  for (const r of rows) {
    if (r.a && r.b) both++;
    else if (r.a) onlyA++;
    else onlyB++;
    if (answeredDifferently(r)) differing++;
    // A trace the later run did not answer (a rerun of others) is neither: only answers are compared.
    if (!r.b) continue;
    if (r.a && !r.a.errorAnswer && r.b.errorAnswer) worse.push(r.traceId);
    else if ((!r.a || r.a.errorAnswer) && !r.b.errorAnswer) fixed.push(r.traceId);
  }
  return { both, differing, onlyA, onlyB, worse, fixed };
}

function comparedRow(r: ComparedTrace, runA: string, runB: string, store: TraceStore, max: number, redact: ((text: string) => string) | undefined) {
  const side = (answer: ComparedTrace['a'], run: string) => ({ ...capped(answer?.answer, 0, max, redact), errorAnswer: answer?.errorAnswer ?? false, verdict: store.verdictOf(run, r.traceId)?.rating ?? null });
  return { ...shownId(r.traceId), differs: answeredDifferently(r), a: side(r.a, runA), b: side(r.b, runB) };
}
