// npm run bench: every speed figure of the project, side by side in one run, on this machine. Writes
// bench/results.json and prints a table. Not part of npm test: speed is measured here, never asserted in tests.
//   node scripts/bench.mjs [--only=<row>,<row>…] [--help]
// Each row (or group of rows measuring one thing) is a file of scripts/bench/, run in the order of ROWS below.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import * as batchapi from './bench/batchapi.mjs';
import * as batchfn from './bench/batchfn.mjs';
import * as editorrun from './bench/editorrun.mjs';
import * as editorscale from './bench/editorscale.mjs';
import * as extension from './bench/extension.mjs';
import * as latency from './bench/latency.mjs';
import * as list from './bench/list.mjs';
import * as owncode from './bench/owncode.mjs';
import { ROOT, say } from './bench/processes.mjs';
import * as ratelimit from './bench/ratelimit.mjs';
import * as report from './bench/report.mjs';
import * as scale from './bench/scale.mjs';
import * as scale2k from './bench/scale2k.mjs';
import * as scale600k from './bench/scale600k.mjs';
import { tableLines } from './bench/table.mjs';
import * as throughput from './bench/throughput.mjs';
import * as webview from './bench/webview.mjs';

/** Every row, in the order it runs: each names the rows it measures and returns their figures. */
const ROWS = [throughput, latency, ratelimit, owncode, batchfn, batchapi, scale, scale2k, scale600k, list, report, editorrun, editorscale, extension, webview];

if (process.argv.includes('--help')) {
  say(`node scripts/bench.mjs [--only=<row>,<row>…]: every row when --only is left out (about 12 minutes)\nrows: ${ROWS.flatMap((r) => r.names).join(', ')}`);
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
