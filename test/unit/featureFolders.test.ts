import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';

// The layers' rule (layering.test.ts) inside two of them: the core's folders stand in one order, each importing
// only those below it; the extension's feature folders import the plumbing at its root and the few features named
// here. A newcomer reads a folder knowing what it cannot reach.

const ROOT = join(__dirname, '..', '..', '..');
const SRC = join(ROOT, 'src');

/** The core's folders, lowest first. A target kind's folder counts as targets/. */
const CORE_ORDER = ['journal', 'targets', 'store', 'options', 'cost', 'run', 'report', 'session'] as const;

/** Which other feature folders each extension feature folder may import (its root, the plumbing, always). */
const EXTENSION_FEATURES: Record<string, readonly string[]> = {
  settings: [],
  access: ['settings'],
  evaluations: ['settings'],
  panels: ['evaluations'],
  review: ['evaluations', 'settings'],
  compare: ['evaluations', 'panels', 'settings'],
  runDetails: ['evaluations', 'panels', 'settings'],
  targets: ['evaluations', 'review', 'settings'],
  runs: ['evaluations', 'review', 'settings', 'targets'],
  agentTools: ['evaluations', 'runs'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The source files a file imports by a relative path (type imports and requires included). */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|require\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) => (m[1] ?? m[2])!);
  return specs
    .map((spec) => join(dirname(file), spec))
    .map((base) => [`${base}.ts`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts')].find((c) => existsSync(c)))
    .filter((found): found is string => found !== undefined);
}

/** Where a file stands: its layer and, within it, its feature folder ('' for the layer's root). */
function placeOf(file: string, src = SRC): { layer: string; folder: string } {
  const parts = relative(src, file).split(sep);
  return { layer: parts[0]!, folder: parts.length > 2 ? parts[1]! : '' };
}

/** Every import from one folder of a layer into another, as "from → to (file)". */
function crossings(layer: string, src = SRC): Array<{ from: string; to: string; file: string }> {
  return sourceFiles(join(src, layer)).flatMap((file) => {
    const from = placeOf(file, src);
    return importedFiles(file)
      .map((target) => placeOf(target, src))
      .filter((to) => to.layer === layer && to.folder !== from.folder)
      .map((to) => ({ from: from.folder, to: to.folder, file: relative(src === SRC ? ROOT : src, file) }));
  });
}

describe('feature folders', () => {
  it("the core's folders import only those below them: journal, targets, store, options, run, report, session", () => {
    const rank = (folder: string) => (CORE_ORDER as readonly string[]).indexOf(folder);
    const folders = readdirSync(join(SRC, 'core'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    assert.deepEqual(folders.filter((f) => rank(f) < 0), [], 'every folder of the core has its place in the order');
    const found = crossings('core');
    assert.ok(found.length > 50, `sees the core's imports (${found.length})`);
    // The root holds the door (index.ts, which imports every folder) and version.ts (which every folder may import).
    const wrong = found.filter(({ from, to }) => from !== '' && to !== '' && rank(to) > rank(from));
    const intoRoot = found.filter(({ from, to, file }) => from !== '' && to === '' && !readFileSync(join(ROOT, file), 'utf8').match(/from '\.\.\/version'/));
    assert.deepEqual([...wrong, ...intoRoot].map(({ from, to, file }) => `${file}: ${from} imports ${to || 'the door'}`), []);
  });

  it("the extension's features import the root's plumbing and only the features named for them", () => {
    const folders = readdirSync(join(SRC, 'extension'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    assert.deepEqual(folders.filter((f) => !(f in EXTENSION_FEATURES)).sort(), [], 'every feature folder has its rule');
    const found = crossings('extension');
    assert.ok(found.length > 20, `sees the extension's imports (${found.length})`);
    const wrong = found.filter(({ from, to }) => from !== '' && to !== '' && !EXTENSION_FEATURES[from]!.includes(to));
    assert.deepEqual(wrong.map(({ from, to, file }) => `${file}: ${from} imports ${to}`), []);
  });

  it("the core's door exports only what a file outside the core imports from it", () => {
    const door = readFileSync(join(SRC, 'core', 'index.ts'), 'utf8');
    const exported = [...door.matchAll(/export (?:type )?\{([^}]+)\}/g)].flatMap((m) => m[1]!.split(',').map((n) => n.trim().split(/\s+as\s+/).pop()!)).filter(Boolean);
    assert.ok(exported.length > 50, `reads the door (${exported.length} names)`);
    const outside = [...sourceFiles(SRC).filter((f) => !f.startsWith(join(SRC, 'core') + sep)), ...sourceFiles(join(ROOT, 'test'))];
    const used = new Set<string>();
    for (const file of outside) {
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:import|export) (?:type )?\{([^}]+)\}\s*from\s*['"]([^'"]+)['"]/g)) {
        if (!/(^|\/)core(\/index)?$/.test(m[2]!)) continue;
        for (const name of m[1]!.split(',')) used.add(name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!);
      }
    }
    assert.deepEqual(exported.filter((name) => !used.has(name)), [], 'names nobody outside the core uses: drop them from the door');
  });

  it('measures what it claims: an import between folders is seen, with its folders', () => {
    const src = mkdtempSync(join(tmpdir(), 'feature-folders-'));
    try {
      for (const folder of ['journal', 'store']) mkdirSync(join(src, 'core', folder), { recursive: true });
      writeFileSync(join(src, 'core', 'store', 'traceStore.ts'), 'export type TraceStore = number;\n');
      writeFileSync(join(src, 'core', 'journal', 'probe.ts'), "import type { TraceStore } from '../store/traceStore';\nexport type Probe = TraceStore;\n");
      assert.deepEqual(crossings('core', src).map(({ from, to }) => `${from} → ${to}`), ['journal → store']);
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });
});
