// 10c. Compare Runs' first rows at 100,000 traces × 2 KB (issue 36): two runs journaled (echo, then answers in
// capitals, so every answer differs), the evaluation opened as the editor has it open (its index read), then, in the
// same process, from asking for the comparison to the first rows as the panel sends them (the comparison, its table,
// the first window's texts). The host's part of editorscale's "to its first rows", without the editor around it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { builtModule, median, say, tempDir } from './processes.mjs';

export const names = ['compare'];

const TRACES = 100_000;
const KEY = { origin: 'http://127.0.0.1:9', kind: 'benchmark', evaluationId: 1 };

export async function measure() {
  say('10c. compare: Compare Runs to its first rows, 100,000 traces × 2 KB, two runs (the host, in one process)');
  const stateDir = tempDir();
  const { journalPath } = await import(builtModule('core', 'journal', 'journal.js'));
  const journal = journalPath(stateDir, KEY);
  try {
    writeJournal(journal);
    say(`  journal ${(statSync(journal).size / 2 ** 20).toFixed(0)} MiB`);
    // A first process opens the evaluation and leaves its index (as the runs' ends or the first status do).
    const first = probe(stateDir);
    const r = probe(stateDir);
    return { compare: { traces: TRACES, journalBytes: statSync(journal).size, firstRowsMs: median(r.runsMs), firstRowsRunsMs: r.runsMs.map(Math.round), openMs: r.openMs, firstOpenMs: first.openMs, rows: r.rows, differing: r.differing, peakRssMB: r.peakRssMB, phasesMs: r.phasesMs } };
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The journal as the CLI writes it for two runs, a line per record, written in pieces (never one string). */
function writeJournal(path) {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const prompt = (i) => `${String(i).padStart(8, '0')} ${'lorem ipsum dolor sit amet '.repeat(76)}`.slice(0, 2048);
  const parts = [];
  const flush = () => {
    writeFileSync(path, parts.join(''), { flag: 'a', mode: 0o600 });
    parts.length = 0;
  };
  for (let i = 0; i < TRACES; i++) parts.push(`${JSON.stringify({ t: 'item', id: `bench-${i}`, p: prompt(i), at: 1 })}\n`);
  parts.push(`${JSON.stringify({ t: 'list', at: 1, total: TRACES, full: true })}\n`);
  flush();
  for (const { run, at, shout } of [{ run: 'run-echo', at: 2, shout: false }, { run: 'run-upper', at: 4, shout: true }]) {
    parts.push(`${JSON.stringify({ t: 'run', at, run, target: shout ? 'python upper.py' : 'echo', mode: 'fresh' })}\n`);
    for (let i = 0; i < TRACES; i++) {
      const a = shout ? prompt(i).toUpperCase() : prompt(i);
      parts.push(`${JSON.stringify({ t: 'answer', id: `bench-${i}`, a, at: at + 0.5, ms: 1, run })}\n${JSON.stringify({ t: 'submitted', id: `bench-${i}`, at: at + 0.6 })}\n`);
      if (parts.length > 10_000) flush();
    }
    parts.push(`${JSON.stringify({ t: 'end', at: at + 1, run, outcome: 'completed' })}\n`);
    flush();
  }
}

/** A process of its own: the evaluation opened, then Compare Runs asked three times (a new panel each time). */
function probe(stateDir) {
  const out = (p) => JSON.stringify(builtModule(...p.split('/')));
  const script = `
    const { EvaluationSession } = require(${out('core/session/session.js')});
    const { CompareTable } = require(${out('extension/compare/compareTable.js')});
    (async () => {
      const session = new EvaluationSession(${JSON.stringify(KEY)}, ${JSON.stringify(stateDir)});
      let t = performance.now();
      await session.load();
      const openMs = performance.now() - t;
      const runsMs = [], phasesMs = [];
      let rows = 0, differing = 0;
      for (let i = 0; i < 3; i++) {
        t = performance.now();
        const compared = await session.compare('run-upper', 'run-echo');
        const t1 = performance.now();
        const table = new CompareTable();
        table.load(compared);
        const first = table.window(0, 60, null);
        runsMs.push(performance.now() - t);
        phasesMs.push({ compare: Math.round(t1 - t), table: Math.round(performance.now() - t1) });
        rows = first.rows.length;
        differing = table.differing;
      }
      console.log(JSON.stringify({ openMs, runsMs, phasesMs, rows, differing, peakRssMB: process.resourceUsage().maxRSS / 1024 }));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', maxBuffer: 2 ** 24 });
  if (r.status !== 0) throw new Error(`the compare probe failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
}
