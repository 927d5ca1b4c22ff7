// One esbuild script for every bundle. Production bundles are minified and carry no sourcemap,
// so nothing under dist/ can leak source paths into the VSIX; --dev adds inline maps for debugging.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { codiconFont, codiconStylesheet } from './codicons.mjs';

const dev = process.argv.includes('--dev');
/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: !dev,
  sourcemap: dev ? 'inline' : false,
  legalComments: 'none',
  logLevel: 'warning',
  // The version recorded with every run (src/core/version.ts).
  define: { EVAL_RUNNER_VERSION: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
};

// undici carries its HTTP parser twice (WebAssembly with and without SIMD, 70 KB each) and prefers SIMD.
// The extension bundle keeps only the portable one: its size and load time are what activation pays for,
// and the editor's request rates never make parsing the bottleneck. The CLI keeps both.
/** @type {import('esbuild').Plugin} */
const portableHttpParser = {
  name: 'portable-http-parser',
  setup(b) {
    b.onResolve({ filter: /llhttp_simd-wasm\.js$/ }, (args) => ({ path: join(args.resolveDir, args.path.replace('llhttp_simd-wasm.js', 'llhttp-wasm.js')) }));
  },
};

// Performance marks around the extension bundle's own evaluation: `npm run bench` splits activation into the
// host's work and ours with them (marks are the shared timeline's, no global of our own).
// The banner precedes esbuild's own "use strict", so it repeats the directive to keep the bundle strict.
// undici's HTTP/2 client is reached only when ALPN picks h2, which needs `allowH2` (off by default, never set here).
// The extension bundle leaves it out (10 KB of activation), and so does the CLI: its module loads node:http2 at the
// start of every command (about 14 ms of CPU each, issue 36), and the runner at every run of the editor.
/** @type {import('esbuild').Plugin} */
const noHttp2 = {
  name: 'no-http2',
  setup(b) {
    b.onResolve({ filter: /^\.\/client-h2\.js$/ }, () => ({ path: 'client-h2', namespace: 'no-http2' }));
    b.onLoad({ filter: /.*/, namespace: 'no-http2' }, () => ({
      contents: "module.exports = function connectH2() { throw new Error('HTTP/2 is not used by Eval Runner'); };",
      loader: 'js',
    }));
  },
};

// undici's multipart/form-data parser serves only Response.formData(), which Eval Runner never calls (it reads JSON
// and sends forms): the extension bundle leaves it out (4.5 KB of activation), its one export a refusal in words.
const noFormDataParser = {
  name: 'no-formdata-parser',
  setup(b) {
    b.onResolve({ filter: /^\.\/formdata-parser$/ }, () => ({ path: 'formdata-parser', namespace: 'no-formdata-parser' }));
    b.onLoad({ filter: /.*/, namespace: 'no-formdata-parser' }, () => ({
      contents: "exports.multipartFormDataParser = function () { throw new Error('Eval Runner reads no multipart/form-data body'); };",
      loader: 'js',
    }));
  },
};

// The python and worker targets' processes run in the runner or the CLI, never in the extension host: the kinds'
// descriptors load them on their first target (src/core/targets/python/workerLoader.ts).
/** @type {import('esbuild').Plugin} */
const workerTargetAside = {
  name: 'worker-target-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/workerTarget$/ }, (args) => (args.kind === 'require-call' ? { path: './workerTarget.js', external: true } : undefined));
  },
};

const BUNDLE_START_MARK = '"use strict";performance.mark("evalRunner:bundleStart");';
const BUNDLE_END_MARK = 'performance.mark("evalRunner:bundleEnd");';

// RFC 9535 JSONPath (an HTTP target's `$…` paths) is loaded on first use: in the extension, the CLI and the runner it is a file of
// its own, dist/jsonpath.js, so that activation and every CLI command do not parse its 41 KB
// (src/core/targets/http/jsonPath.ts requires it lazily).
/** @type {import('esbuild').Plugin} */
const jsonPathAside = {
  name: 'jsonpath-aside',
  setup(b) {
    b.onResolve({ filter: /^jsonpath-rfc9535$/ }, () => ({ path: './jsonpath.js', external: true }));
  },
};

// The price list's snapshot and the tokenizer (src/core/cost/prices.ts, tokens.ts) are files of their own
// (dist/prices.js, dist/tokenizer.js; the tokenizer's encodings are 3 MB), required when a run is priced or
// estimated: the extension never reaches them, and the CLI does not parse them on every command.
/** @type {import('esbuild').Plugin} */
const costDataAside = {
  name: 'cost-data-aside',
  setup(b) {
    b.onResolve({ filter: /^(@pydantic\/genai-prices|gpt-tokenizer)$/ }, (args) =>
      args.kind === 'require-call' ? { path: args.path === 'gpt-tokenizer' ? './tokenizer.js' : './prices.js', external: true } : undefined,
    );
  },
};

// The sandbox (Try the Local Sandbox) likewise: dist/sandbox.js, required when it first starts
// (src/extension/evaluations/sandboxController.ts).
/** @type {import('esbuild').Plugin} */
const sandboxAside = {
  name: 'sandbox-aside',
  setup(b) {
    b.onResolve({ filter: /^(\.\.\/)+sandbox\/server$/ }, (args) => (args.kind === 'require-call' ? { path: './sandbox.js', external: true } : undefined));
  },
};

// The curl reader (Select Target's "HTTP request from curl…") likewise: dist/curlRequest.js, required on first use
// (src/core/targets/http/curlLoader.ts).
/** @type {import('esbuild').Plugin} */
const curlAside = {
  name: 'curl-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/curlRequest$/ }, (args) => (args.kind === 'require-call' ? { path: './curlRequest.js', external: true } : undefined));
  },
};

// The prompt list's parser likewise: dist/listParser.js, required on the first list (src/api/listStream.ts).
/** @type {import('esbuild').Plugin} */
const listAside = {
  name: 'list-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/listParser$/ }, (args) => (args.kind === 'require-call' ? { path: './listParser.js', external: true } : undefined));
  },
};

// The report page (eval-runner report): its script and style are inlined into the CLI, which writes them into
// each report file (src/core/report/renderReport.ts).
const reportScript = (
  await build({ entryPoints: ['src/webview/app/report.ts'], bundle: true, platform: 'browser', format: 'iife', target: 'es2022', minify: !dev, legalComments: 'none', logLevel: 'warning', write: false })
).outputFiles[0].text;
// The pages' stylesheets, build inputs only (not under media/, whose every file the VSIX ships).
const pageStyle = readFileSync('src/webview/styles/progress.css', 'utf8');
const reportStyle = pageStyle + readFileSync('src/webview/styles/report.css', 'utf8');
const reportDefines = { REPORT_SCRIPT: JSON.stringify(reportScript), REPORT_STYLE: JSON.stringify(reportStyle) };
// In the extension the report's writer and its page are a file of their own, dist/renderReport.js, required only by
// Export Report (src/extension/evaluations/evaluationCommands.ts).
/** @type {import('esbuild').Plugin} */
const reportPageAside = {
  name: 'report-page-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/renderReport\.js$/ }, () => ({ path: './renderReport.js', external: true }));
  },
};

// The Batch API's run path (the openai target with batch: true) likewise: dist/batchRun.js, required when such a run
// starts (src/core/run/batchLoader.ts).
// The run engine likewise: dist/engine.js (src/core/run/engineLoader.ts); the editor's runs are the runner's, which
// bundles it, so the extension host does not load it at all.
/** @type {import('esbuild').Plugin} */
const engineAside = {
  name: 'engine-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/engine$/ }, (args) => (args.kind === 'require-call' ? { path: './engine.js', external: true } : undefined));
  },
};

/** @type {import('esbuild').Plugin} */
const batchRunAside = {
  name: 'batch-run-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/batchRun$/ }, (args) => (args.kind === 'require-call' ? { path: './batchRun.js', external: true } : undefined));
  },
};

// The index's writer (src/core/store/storeIndexWrite.ts) likewise: dist/storeIndexWrite.js, required when the window
// first keeps an index (src/core/session/storeSync.ts); the runner writes its runs' own.
/** @type {import('esbuild').Plugin} */
const indexWriteAside = {
  name: 'index-write-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/store\/storeIndexWrite$/ }, (args) => (args.kind === 'require-call' ? { path: './storeIndexWrite.js', external: true } : undefined));
  },
};

// Select Target's curl import (src/extension/targets/curlPick.ts) likewise: dist/curlPick.js, required when it is picked.
/** @type {import('esbuild').Plugin} */
const curlPickAside = {
  name: 'curl-pick-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/curlPick\.js$/ }, () => ({ path: './curlPick.js', external: true }));
  },
};

// Add Evaluation's questions (src/extension/evaluations/addEvaluation.ts) likewise: dist/addEvaluation.js, required when asked.
/** @type {import('esbuild').Plugin} */
const addEvaluationAside = {
  name: 'add-evaluation-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/addEvaluation\.js$/ }, () => ({ path: './addEvaluation.js', external: true }));
  },
};

// The agents' tools in the editor (src/extension/agentTools/agentToolCalls.ts, with the tool table and its schemas)
// likewise: dist/agentToolCalls.js, required on a tool's first call; registering needs only package.json's names.
/** @type {import('esbuild').Plugin} */
const agentToolCallsAside = {
  name: 'agent-tool-calls-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/agentToolCalls\.js$/ }, () => ({ path: './agentToolCalls.js', external: true }));
  },
};

// The runner process (src/runner/, dist/runner.js) hosts the core for the editor's runs; the window's client of it,
// with its JSON-RPC library, is dist/runnerClient.js, loaded on the first run (src/extension/runs/runs.ts), not at activation.
/** @type {import('esbuild').Plugin} */
const runnerClientAside = {
  name: 'runner-client-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/runnerClient\.js$/ }, () => ({ path: './runnerClient.js', external: true }));
  },
};

// `eval-runner mcp` (src/cli/mcpCommand.ts), with the MCP SDK and its schema checker, likewise: dist/mcp.js, required by
// that command alone, so no other command of the CLI reads it.
/** @type {import('esbuild').Plugin} */
const mcpAside = {
  name: 'mcp-aside',
  setup(b) {
    b.onResolve({ filter: /^\.\/mcpCommand$/ }, (args) => (args.kind === 'require-call' ? { path: './mcp.js', external: true } : undefined));
  },
};

await Promise.all([
  build({ ...common, entryPoints: ['src/extension/main.ts'], outfile: 'dist/extension.js', banner: { js: BUNDLE_START_MARK }, footer: { js: BUNDLE_END_MARK }, external: ['vscode'], plugins: [portableHttpParser, noHttp2, noFormDataParser, workerTargetAside, jsonPathAside, costDataAside, sandboxAside, curlAside, listAside, engineAside, batchRunAside, reportPageAside, runnerClientAside, curlPickAside, addEvaluationAside, agentToolCallsAside, indexWriteAside] }),
  build({ ...common, entryPoints: ['src/core/store/storeIndexWrite.ts'], outfile: 'dist/storeIndexWrite.js' }),
  build({ ...common, entryPoints: ['src/extension/targets/curlPick.ts'], outfile: 'dist/curlPick.js', external: ['vscode'], plugins: [curlAside] }),
  build({ ...common, entryPoints: ['src/extension/evaluations/addEvaluation.ts'], outfile: 'dist/addEvaluation.js', external: ['vscode'] }),
  build({ ...common, entryPoints: ['src/extension/agentTools/agentToolCalls.ts'], outfile: 'dist/agentToolCalls.js', external: ['vscode'], plugins: [portableHttpParser, noHttp2, workerTargetAside, jsonPathAside, costDataAside, sandboxAside, curlAside, listAside, engineAside, batchRunAside] }),
  build({ ...common, entryPoints: ['src/core/targets/python/workerTarget.ts'], outfile: 'dist/workerTarget.js' }),
  build({ ...common, entryPoints: ['gpt-tokenizer'], outfile: 'dist/tokenizer.js' }),
  build({ ...common, entryPoints: ['@pydantic/genai-prices'], outfile: 'dist/prices.js' }),
  build({ ...common, entryPoints: ['src/api/listParser.ts'], outfile: 'dist/listParser.js' }),
  build({ ...common, entryPoints: ['src/core/run/batchRun.ts'], plugins: [costDataAside], outfile: 'dist/batchRun.js' }),
  build({ ...common, entryPoints: ['src/core/run/engine.ts'], plugins: [costDataAside], outfile: 'dist/engine.js' }),
  build({ ...common, entryPoints: ['src/core/targets/http/curlRequest.ts'], outfile: 'dist/curlRequest.js' }),
  build({ ...common, entryPoints: ['src/extension/runs/runnerClient.ts'], outfile: 'dist/runnerClient.js' }),
  build({ ...common, entryPoints: ['src/runner/main.ts'], plugins: [noHttp2, jsonPathAside, costDataAside], outfile: 'dist/runner.js' }),
  build({ ...common, entryPoints: ['src/core/targets/python/debugWorker.ts'], outfile: 'dist/debugWorker.js' }),
  build({ ...common, entryPoints: ['src/sandbox/server.ts'], outfile: 'dist/sandbox.js' }),
  build({ ...common, define: { ...common.define, ...reportDefines }, entryPoints: ['src/core/report/renderReport.ts'], outfile: 'dist/renderReport.js' }),
  build({ ...common, stdin: { contents: "module.exports = require('jsonpath-rfc9535');", resolveDir: '.', loader: 'js' }, outfile: 'dist/jsonpath.js' }),
  build({ ...common, define: { ...common.define, ...reportDefines }, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' }, plugins: [noHttp2, jsonPathAside, costDataAside, mcpAside] }),
  build({ ...common, define: { ...common.define, ...reportDefines }, entryPoints: ['src/cli/mcpCommand.ts'], plugins: [costDataAside], outfile: 'dist/mcp.js' }),
  // The webview front ends (src/webview/app/), one script per page for the browser; they import only types from the
  // protocol, so nothing of the host's (zod included) is in them. Built into media/ (the webviews' resource root).
  build({
    entryPoints: { runDetails: 'src/webview/app/runDetails.ts', compare: 'src/webview/app/compare.ts' },
    outdir: 'media/webview',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: !dev,
    sourcemap: dev ? 'inline' : false,
    legalComments: 'none',
    logLevel: 'warning',
  }),
]);

// The webview's icon font comes from @vscode/codicons, written here (not committed) so the VSIX carries it: it and its
// stylesheet cut to the icons the pages draw (scripts/codicons.mjs), the stylesheet into the pages' one.
rmSync('media/codicons', { recursive: true, force: true });
mkdirSync('media/codicons');
const codicons = await codiconStylesheet();
writeFileSync('media/codicons/codicon.ttf', codiconFont(readFileSync('node_modules/@vscode/codicons/dist/codicon.ttf'), codicons.codePoints));
// A webview page links one stylesheet, the icons' and the pages' own (src/webview/styles/progress.css, not shipped):
// each file is a request through the webview's service worker and the workbench, while the run goes on. The font's URL
// is made relative to media/webview/; not found, the pages would ask for a font that is not there and draw no icon, so
// the build stops.
const FONT_URL = 'url("./codicon.ttf';
if (!codicons.css.includes(FONT_URL)) throw new Error(`codicon.css has no ${FONT_URL}…: update scripts/build.mjs`);
writeFileSync('media/webview/page.css', `${codicons.css.replace(FONT_URL, 'url("../codicons/codicon.ttf')}\n${pageStyle}`);

// The Python target's shim runs beside the bundle that starts it (src/core/targets/python/pythonTarget.ts, shimPath).
cpSync('src/core/targets/python/evalRunnerShim.py', 'dist/evalRunnerShim.py');
// Debug Trace's shims (src/core/targets/python/debugLaunch.ts, debugShimPath): Python's beside the run's shim it imports,
// and the Node one that feeds a worker its one request under the JavaScript debugger.
cpSync('src/core/targets/python/evalRunnerDebug.py', 'dist/evalRunnerDebug.py');
