import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { execFileSync } from 'node:child_process';

const ROOT = join(__dirname, '..', '..', '..');

/** The files under src/ a file imports by a relative path (type imports included). */
function localImports(file: string): string[] {
  return importsOf(file)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => join(file, '..', spec))
    .map((base) => [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate)))
    .filter((found): found is string => found !== undefined);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|cts|js)$/.test(entry.name) ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  return importsIn(readFileSync(file, 'utf8'));
}

function importsIn(text: string): string[] {
  const specs: string[] = [];
  const pattern = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(pattern)) specs.push((m[1] ?? m[2] ?? m[3])!);
  return specs;
}

type Layer = 'api' | 'sandbox' | 'core' | 'webview' | 'protocol' | 'runner' | 'tools' | 'cli' | 'extension';
/** Which layers each layer may import from (besides itself). */
const ALLOWED: Record<Layer, readonly string[]> = {
  api: [],
  sandbox: ['api'],
  core: ['api'],
  // The webview protocol names the core's trace states (types only: see the front-end rule below).
  webview: ['core'],
  // The runner's protocol, declared apart from both ends: the core's and the API's types and words only.
  protocol: ['api', 'core'],
  // The runner process hosts the core for the editor's runs, behind the protocol.
  runner: ['api', 'core', 'protocol'],
  // The agents' tools, one table under the MCP server and the editor's language-model tools (issue 39).
  tools: ['api', 'core', 'protocol'],
  // The CLI's run listens on the runner protocol, and pause / resume / set speak it (issue 38).
  cli: ['api', 'core', 'sandbox', 'protocol', 'tools'],
  extension: ['api', 'core', 'sandbox', 'webview', 'protocol', 'tools'],
};

describe('architecture rules', () => {
  const files = sourceFiles(join(ROOT, 'src'));

  it('finds the sources, and sees every form of import', () => {
    assert.ok(files.length > 10, `found ${files.length} files under src/`);
    const forms = "import * as vscode from 'vscode';\nimport type { X } from \"vscode\";\nconst v = require('vscode');\nawait import('vscode');";
    assert.deepEqual(importsIn(forms), ['vscode', 'vscode', 'vscode', 'vscode']);
  });

  it('imports vscode only under src/extension/', () => {
    const offenders = files.filter((f) => {
      const rel = relative(join(ROOT, 'src'), f);
      return !rel.startsWith(`extension${sep}`) && importsOf(f).includes('vscode');
    });
    assert.deepEqual(offenders.map((f) => relative(ROOT, f)), []);
  });

  it('imports only downwards: api ← sandbox, core ← cli, extension', () => {
    const violations: string[] = [];
    for (const file of files) {
      const layer = relative(join(ROOT, 'src'), file).split(sep)[0] as Layer;
      for (const spec of importsOf(file)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(join(ROOT, 'src'), join(file, '..', spec)).split(sep)[0];
        if (target !== layer && !ALLOWED[layer].includes(target!)) violations.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
    assert.deepEqual(violations, []);
  });

  it("enters the core through its door: the CLI, the extension and the webview protocol import src/core/index.ts only", () => {
    const offenders = files.flatMap((file) => {
      const layer = relative(join(ROOT, 'src'), file).split(sep)[0];
      if (layer === 'core' || layer === 'api' || layer === 'sandbox') return [];
      return importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => relative(join(ROOT, 'src'), join(file, '..', spec)).split(sep))
        .filter((parts) => parts[0] === 'core' && !(parts.length === 1 || (parts.length === 2 && parts[1] === 'index')))
        .map((parts) => `${relative(ROOT, file)} imports src/${parts.join('/')}`);
    });
    assert.deepEqual(offenders, []);
  });

  it('has no import cycle, type imports included', () => {
    const graph = new Map(files.map((file) => [file, localImports(file)]));
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(ROOT, f)).join(' → '));
        else if (!state.has(next)) visit(next, [...path, next]);
      }
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file, [file]);
    assert.deepEqual(cycles, []);
  });

  it('loads the JSON-RPC library in the CLI only when a run is reached or a window connects, not at every command', () => {
    // The files a CLI command evaluates at its start: those its entry imports as values, not by type or a require().
    const valueImports = (file: string) => [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s(?!type\s)[^'"]*?from\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
    const reached = new Map<string, string>([[join(ROOT, 'src', 'cli', 'main.ts'), join('src', 'cli', 'main.ts')]]);
    const offenders: string[] = [];
    for (const [file, chain] of reached) {
      for (const spec of valueImports(file)) {
        if (spec.startsWith('vscode-jsonrpc')) offenders.push(`${chain} imports ${spec}`);
        const next = spec.startsWith('.') ? [`${join(file, '..', spec)}.ts`, join(file, '..', spec, 'index.ts')].find((c) => existsSync(c)) : undefined;
        if (next && !reached.has(next)) reached.set(next, `${chain} → ${relative(ROOT, next)}`);
      }
    }
    assert.ok(reached.has(join(ROOT, 'src', 'protocol', 'runListener.ts')), 'the walk reaches the run listener');
    assert.deepEqual(offenders, []);
  });

  it('keeps the webview front ends to browser code: no package, no schema, only the protocol, the report data types, the text match and each other', () => {
    const app = join(ROOT, 'src', 'webview', 'app');
    const offenders = files
      .filter((f) => f.startsWith(app + sep))
      .flatMap((f) => importsOf(f).filter((spec) => !spec.startsWith('./') && spec !== '../protocol' && spec !== '../reportData' && spec !== '../textMatch').map((spec) => `${relative(ROOT, f)} imports ${spec}`));
    assert.deepEqual(offenders, []);
    // protocol.ts itself imports only types, so the bundles carry none of the host's code (zod above all).
    for (const types of ['protocol.ts', 'reportData.ts', 'textMatch.ts']) {
      const text = readFileSync(join(ROOT, 'src', 'webview', types), 'utf8');
      assert.deepEqual(importsIn(text.replace(/^(import|export) type .*$/gm, '')), [], types);
    }
    for (const page of ['runDetails', 'compare']) {
      const size = statSync(join(ROOT, 'media', 'webview', `${page}.js`)).size;
      assert.ok(size <= 32 * 1024, `media/webview/${page}.js is ${Math.round(size / 1024)} KB`);
    }
  });

  it('speaks HTTP through src/api/http.ts only, so the bundles never pull in the whole undici or zod entry', () => {
    const offenders = files.flatMap((f) => {
      const rel = relative(ROOT, f);
      return importsOf(f)
        .filter((spec) => (spec.startsWith('undici') && rel !== join('src', 'api', 'http.ts')) || spec === 'zod')
        .map((spec) => `${rel} imports ${spec}`);
    });
    assert.deepEqual(offenders, []);
  });

  // One budget, scripts/bench/budgets.json's, which the bench reports against too; its history is that file's log.
  const budgetKB = (JSON.parse(readFileSync(join(ROOT, 'scripts', 'bench', 'budgets.json'), 'utf8')) as Record<string, number>)['dist/extension.js'] ?? 0;
  it(`keeps dist/extension.js within ${budgetKB} KB (activation loads all of it); the sandbox is a file of its own`, () => {
    const size = statSync(join(ROOT, 'dist', 'extension.js')).size;
    const bundle = readFileSync(join(ROOT, 'dist', 'extension.js'), 'utf8');
    assert.ok(size <= budgetKB * 1024, `dist/extension.js is ${Math.round(size / 1024)} KB`);
    assert.ok(bundle.includes('"./listParser.js"') && !bundle.includes('a field name is larger than 64 KiB'), 'the list parser is a file of its own');
    assert.ok(!bundle.includes('Prompts retrieved successfully'), 'the sandbox service is not in the extension bundle');
    assert.match(readFileSync(join(ROOT, 'dist', 'sandbox.js'), 'utf8'), /Prompts retrieved successfully/);
  });

  it("packs into the CLI's tarball (npm pack) every file the CLI loads from beside itself, and no source", () => {
    const packed = JSON.parse(execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', shell: process.platform === 'win32' })) as { files: { path: string }[] }[];
    const files = new Set(packed[0]!.files.map((f) => f.path));
    const needed = new Set(['dist/cli.js']);
    for (const file of needed) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/require\("\.\/([\w-]+\.js)"\)|"(evalRunner\w*\.py)"/g)) needed.add(`dist/${m[1] ?? m[2]}`);
    }
    assert.ok(needed.has('dist/jsonpath.js') && needed.has('dist/evalRunnerShim.py'), [...needed].join(', '));
    assert.deepEqual([...needed].filter((f) => !files.has(f)), [], 'left out of the tarball');
    assert.deepEqual([...files].filter((f) => /^(src|test|scripts)\//.test(f)), [], 'sources and tests stay out');
  });
});
