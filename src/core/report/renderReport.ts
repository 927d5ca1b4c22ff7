import { createHash } from 'node:crypto';
import type { ReportData } from './reportTypes';

// The page's script (src/webview/app/report.ts) and style (media/progress.css and media/report.css), inlined by
// scripts/build.mjs into the CLI bundle; code compiled by tsc for the tests has neither.
declare const REPORT_SCRIPT: string | undefined;
declare const REPORT_STYLE: string | undefined;

/**
 * One self-contained HTML file: the data as a JSON block (not executed), the script and the style inline, and a CSP
 * that allows exactly those two by their hashes and nothing else, so the file makes no request of its own.
 */
/** The page's script and style (inlined in dist/cli.js and dist/reportPage.js, which the extension loads). */
export interface ReportPage {
  script: string;
  style: string;
}

export function renderReport(data: ReportData, page: ReportPage = bundledPage()): string {
  const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
  const csp = `default-src 'none'; script-src ${hash(page.script)}; style-src ${hash(page.style)}; img-src data:`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(`Eval Runner report: ${data.title}`)}</title>
<style>${page.style}</style>
</head>
<body class="report">
<div id="app"></div>
<script type="application/json" id="report-data">${jsonForHtml(data)}</script>
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

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
