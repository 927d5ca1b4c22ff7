import { createHash } from 'node:crypto';
import { pageStart } from './htmlPage';
import type { ReportData, ReportRow } from './reportTypes';

// The page's script (src/webview/app/report.ts) and style (progress.css and report.css of src/webview/styles/), inlined
// by scripts/build.mjs into the CLI bundle; code compiled by tsc for the tests has neither.
declare const REPORT_SCRIPT: string | undefined;
declare const REPORT_STYLE: string | undefined;

/**
 * One self-contained HTML file: the data as a JSON block (not executed), the script and the style inline, and a CSP
 * that allows exactly those two by their hashes and nothing else, so the file makes no request of its own.
 */
/** The page's script and style (inlined in dist/cli.js and dist/renderReport.js, which the extension loads). */
export interface ReportPage {
  script: string;
  style: string;
}

export function renderReport(data: ReportData, page: ReportPage = bundledPage()): string {
  const { rows, ...summary } = data;
  return [...reportChunks(summary, rows, page)].join('');
}

/**
 * The page piece by piece, its rows one at a time: a report of 100,000 traces of 2 KB is written to its file as it
 * is made, never held as one 400 MB string.
 */
export function* reportChunks(summary: Omit<ReportData, 'rows'>, rows: Iterable<ReportRow>, page: ReportPage = bundledPage()): Generator<string> {
  const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
  const csp = `default-src 'none'; script-src ${hash(page.script)}; style-src ${hash(page.style)}; img-src data:`;
  const head = `<meta name="color-scheme" content="light dark">\n<style>${page.style}</style>`;
  yield `${pageStart({ csp, title: `Eval Runner report: ${summary.title}`, head, bodyClass: 'report' })}
<div id="app"></div>
<script type="application/json" id="report-data">`;
  // The summary's object, opened again for its rows (the escaping is per character, so it holds piece by piece).
  yield `${jsonForHtml(summary).slice(0, -1)},"rows":[`;
  let first = true;
  for (const row of rows) {
    yield `${first ? '' : ','}${jsonForHtml(row)}`;
    first = false;
  }
  yield `]}</script>
<script>${page.script}</script>
</body>
</html>
`;
}

function bundledPage(): ReportPage {
  if (typeof REPORT_SCRIPT !== 'string' || typeof REPORT_STYLE !== 'string') throw new Error('The report page is only in the built CLI (dist/cli.js): run "npm run build".');
  return { script: REPORT_SCRIPT, style: REPORT_STYLE };
}

/** JSON that cannot end its script element or start a comment, whatever the traces hold. */
function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

