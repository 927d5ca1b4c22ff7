// The bench's rows, in the order they run: each file names the rows it measures (`names`, what --only= takes) and
// returns their figures (`measure`), which scripts/bench/table.mjs turns into the table's lines.
import * as batchapi from './batchapi.mjs';
import * as batchfn from './batchfn.mjs';
import * as compare from './compare.mjs';
import * as editorrun from './editorrun.mjs';
import * as editorscale from './editorscale.mjs';
import * as extension from './extension.mjs';
import * as latency from './latency.mjs';
import * as list from './list.mjs';
import * as owncode from './owncode.mjs';
import * as ratelimit from './ratelimit.mjs';
import * as report from './report.mjs';
import * as scale from './scale.mjs';
import * as scale2k from './scale2k.mjs';
import * as scale600k from './scale600k.mjs';
import * as steer from './steer.mjs';
import * as throughput from './throughput.mjs';
import * as webview from './webview.mjs';

export const ROWS = [throughput, latency, ratelimit, owncode, batchfn, batchapi, scale, scale2k, scale600k, steer, list, report, editorrun, editorscale, compare, extension, webview];
