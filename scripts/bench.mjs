// npm run bench: every speed figure of the project, side by side in one run, on this machine. Writes
// bench/results.json and prints a table. Not part of npm test: speed is measured here, never asserted in tests.
//   node scripts/bench.mjs [--only=<row>,<row>…] [--against=<commit> [--rounds=N]] [--help]
// Each row (or group of rows measuring one thing) is a file of scripts/bench/, run in the order of bench/rows.mjs.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { against } from './bench/against.mjs';
import { ROOT, say } from './bench/processes.mjs';
import { ROWS } from './bench/rows.mjs';
import { tableLines } from './bench/table.mjs';

if (process.argv.includes('--help')) {
  say(`node scripts/bench.mjs [--only=<row>,<row>…] [--against=<commit> [--rounds=N]]: every row when --only is left out (about 12 minutes)
  --against=<commit>  also builds that commit in a temporary worktree and runs the rows on both, alternating, N rounds
                      (default 3): medians side by side and their ratio (rows that run the CLI and the sandbox)
rows: ${ROWS.flatMap((r) => r.names).join(', ')}`);
  process.exit(0);
}

const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
/** @param {string} name */
const wanted = (name) => !only || only.includes(name);
const results = { machine: machine(), startedAt: new Date().toISOString(), figures: {}, finishedAt: '' };

function machine() {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

const againstCommit = process.argv.find((a) => a.startsWith('--against='))?.slice(10);
if (againstCommit) {
  const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 3);
  results.against = { commit: againstCommit, rounds, figures: await against(againstCommit, ROWS, wanted, rounds) };
  mkdirSync(join(ROOT, 'bench'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'against.json'), `${JSON.stringify({ ...results, finishedAt: new Date().toISOString() }, null, 2)}\n`);
  say(`\nwritten: bench/against.json`);
  process.exit(0);
}

for (const row of ROWS) if (row.names.some(wanted)) Object.assign(results.figures, await row.measure(wanted));

results.finishedAt = new Date().toISOString();
mkdirSync(join(ROOT, 'bench'), { recursive: true });
writeFileSync(join(ROOT, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
const m = results.machine;
say(`\nEval Runner benchmark · ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}`);
for (const [key, what, value, target, met] of tableLines(results.figures)) {
  if (!wanted(key) || !value) continue;
  say(`  ${what.padEnd(46)} ${value}${target ? `   [target ${target}: ${met ? 'met' : 'MISSED'}]` : ''}`);
}
say(`\nwritten: bench/results.json`);
