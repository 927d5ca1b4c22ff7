import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..', '..', '..');
const MAX_LINES = 80;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every function, method, arrow function and accessor with a body, and how many lines it spans. */
function functionLengths(file: string): Array<{ where: string; lines: number }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ where: string; lines: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = 'name' in node && node.name ? (node.name as ts.Node).getText(source) : '(anonymous)';
      found.push({ where: `${relative(ROOT, file)}:${first + 1} ${name}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the shape of the code', () => {
  it(`has no function in src/ over ${MAX_LINES} lines: one that long holds parts that want names of their own`, () => {
    const all = sources(join(ROOT, 'src')).flatMap(functionLengths);
    assert.ok(all.length > 300, `found ${all.length} functions`);
    const long = all.filter((f) => f.lines > MAX_LINES).map((f) => `${f.where} (${f.lines} lines)`);
    assert.deepEqual(long, []);
  });

  it('measures what it claims: a function of 81 lines is caught', () => {
    const body = Array.from({ length: 79 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const file = join(ROOT, 'out', 'codeShapeProbe.ts');
    writeFileSync(file, `function probe() {\n${body}\n}\n`);
    assert.deepEqual(functionLengths(file).map((f) => f.lines), [81]);
  });
});
