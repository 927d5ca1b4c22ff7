import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceStore } from '../../src/core/store/traceStore';
import type { EvaluationSession } from '../../src/core';
import type { EvaluationRef } from '../../src/extension/evaluations/registry';
import { childrenOf, contextValue, PAGE_SIZE, respondedUnder } from '../../src/extension/evaluations/treeModel';
import type { TreeNode } from '../../src/extension/evaluations/treeModel';

const ROOT = join(__dirname, '..', '..', '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

interface Contributes {
  commands: Array<{ command: string; title: string }>;
  menus: Record<string, Array<{ command: string; when?: string; group?: string }>>;
  walkthroughs: Array<{ steps: Array<{ id: string; description: string; media: { markdown?: string } }> }>;
}
const contributes = () => (JSON.parse(read('package.json')) as { contributes: Contributes }).contributes;
const nls = () => JSON.parse(read('package.nls.json')) as Record<string, string>;
/** A command's title as the palette shows it. */
const title = (id: string) => {
  const c = contributes().commands.find((x) => x.command === id);
  assert.ok(c, `${id} is declared`);
  return nls()[c.title.slice(1, -1)]!;
};

describe('contributes: the command table, names and reach', () => {
  it('declares exactly the commands of the one command table (src/extension/commands.ts)', () => {
    const table = read('src/extension/commands.ts');
    const body = table.slice(table.indexOf('export const COMMANDS'), table.indexOf('} satisfies'));
    const inTable = [...body.matchAll(/^ {2}'(evalRunner\.[A-Za-z]+)':/gm)].map((m) => m[1]).sort();
    assert.deepEqual(inTable, contributes().commands.map((c) => c.command).sort());
  });

  it('gives every command its own title, and the local panel a name apart from the service\'s Process Details', () => {
    const titles = contributes().commands.map((c) => title(c.command));
    assert.deepEqual(titles.filter((t, i) => titles.indexOf(t) !== i), [], 'two commands with one title');
    assert.equal(title('evalRunner.showProgress'), 'Show Run Details');
    assert.doesNotMatch(title('evalRunner.showProgress'), /Process Details/);
    assert.match(title('evalRunner.openProcessDetails'), /Process Details on the Service/);
    const buttons = read('src/extension/buttons.ts');
    assert.match(buttons, /l10n\.t\('Show Run Details'\)/);
    assert.doesNotMatch(buttons, /'Show Progress'|'Retry Failed'/);
    assert.match(read('src/extension/runDetails/runDetailsPanel.ts'), /RUN_DETAILS = 'Run Details'/);
  });

  it('makes Retry Failed the Rerun Traces path on the failed traces, and names it so', () => {
    assert.equal(title('evalRunner.rerunTraces'), 'Rerun Traces…');
    assert.equal(title('evalRunner.retryFailed'), 'Rerun Failed Traces');
    assert.match(read('src/extension/commands.ts'), /'evalRunner\.retryFailed': \(ctx, f, arg\) => rerunTraces\(ctx, f, arg, 'failed'\)/);
    assert.doesNotMatch(read('src/extension/runs/runCommands.ts'), /retryFailed/, 'no second way of rerunning the failed');
    assert.match(read('src/core/run/rerun.ts'), /RERUN_SUBSETS = \['failed'/, "Rerun Traces' first choice is the failed traces");
  });

  it('offers Approve and Submit on the Responded group, its pages, selected traces and the evaluation', () => {
    const menus = contributes().menus['view/item/context']!.filter((m) => m.command === 'evalRunner.approveAndSubmit');
    const when = menus.map((m) => m.when ?? '').join('\n');
    for (const item of ['stateGroup:answered', 'page:answered', 'trace:answered:hasAnswer:unrated', 'evaluation:benchmark:idle:configured:hasResponded']) {
      const matched = menus.some((m) => new RegExp(/viewItem =~ \/(.*)\//.exec(m.when ?? '')![1]!).test(item));
      assert.ok(matched, `a menu for ${item} in\n${when}`);
    }
    assert.ok(menus.some((m) => m.group === 'inline' && /stateGroup/.test(m.when ?? '')), 'an inline button on the group');
    assert.match(title('evalRunner.approveAndSubmit'), /^Approve and Submit/);
  });

  it('offers Debug Trace on a trace of the tree, in the review editor and on a row of Run Details, for your own code only', () => {
    assert.equal(title('evalRunner.debugTrace'), 'Debug Trace');
    const tree = contributes().menus['view/item/context']!.filter((m) => m.command === 'evalRunner.debugTrace');
    assert.ok(tree.some((m) => /viewItem =~ \/\^trace:\//.test(m.when ?? '') && /evalRunner\.targetDebuggable/.test(m.when ?? '')), 'on any trace, while the target is python or worker');
    const editor = contributes().menus['editor/title']!.filter((m) => m.command === 'evalRunner.debugTrace');
    assert.ok(editor.some((m) => /resourceScheme == evalrunner/.test(m.when ?? '')), 'in the review editor');
    assert.match(read('src/extension/review/review.ts'), /'evalRunner\.debugTrace', document\.uri/, "the review editor's code lens");
    assert.match(read('src/webview/messageSchemas.ts'), /z\.literal\('debug'\), traceId/, "the row's message, checked on the host");
    assert.match(read('src/extension/runDetails/runDetailsPanel.ts'), /case 'debug':\n\s+if \(known\) run\('evalRunner\.debugTrace', message\.traceId\)/, 'only for a trace the panel knows');
    assert.match(read('src/extension/targets/debugTrace.ts'), /setContext', 'evalRunner\.targetDebuggable'/);
  });

  it('puts "Eval Runner: Show Logs" in the palette and the view\'s menu', () => {
    assert.equal(title('evalRunner.showLogs'), 'Show Logs');
    assert.equal(nls()['command.category'], 'Eval Runner');
    const hidden = contributes().menus.commandPalette!.filter((m) => m.command === 'evalRunner.showLogs');
    assert.deepEqual(hidden, [], 'not hidden from the palette');
    assert.ok(contributes().menus['view/title']!.some((m) => m.command === 'evalRunner.showLogs'));
  });

  it("covers the Python and worker targets in the walkthrough's target step", () => {
    const step = contributes().walkthroughs[0]!.steps.find((s) => s.id === 'target')!;
    const text = `${nls()[step.description.slice(1, -1)]}\n${read(step.media.markdown!)}`;
    assert.match(text, /Python function/);
    assert.match(text, /`python`/);
    assert.match(text, /`worker`/);
    assert.match(read('media/walkthrough/run.md'), /Show Run Details/);
  });
});

describe('the tree: which Responded answers a group, page or selection approves', () => {
  const ref = { id: 'r1', label: 'Bench' } as EvaluationRef;
  const other = { id: 'r2', label: 'Other' } as EvaluationRef;
  const store = new TraceStore();
  const ids = Array.from({ length: PAGE_SIZE + 5 }, (_, i) => `t${String(i).padStart(4, '0')}`);
  store.apply({ t: 'prompts', at: 1, items: [...ids, 'done', 'todo'].map((traceId) => ({ traceId, content: `q ${traceId}` })) });
  for (const id of [...ids, 'done']) store.apply({ t: 'answer', id, a: `a ${id}`, at: 2 });
  store.apply({ t: 'submitted', id: 'done', at: 3 });
  const session = { store } as unknown as EvaluationSession;
  const trace = (id: string, r = ref): TreeNode => ({ kind: 'trace', ref: r, trace: store.get(id)! });

  it('takes every Responded answer of a group or an evaluation, and a page its slice', () => {
    assert.deepEqual(respondedUnder([{ kind: 'group', ref, state: 'answered', count: ids.length }], session), ids);
    assert.deepEqual(respondedUnder([{ kind: 'evaluation', ref }], session), ids);
    assert.deepEqual(respondedUnder([{ kind: 'page', ref, state: 'answered', page: 1, count: 5 }], session), ids.slice(PAGE_SIZE));
    assert.deepEqual(respondedUnder([{ kind: 'group', ref, state: 'submitted', count: 1 }], session), []);
  });

  it('pages a group of more than a page; a page holds its window of the state, in list order', () => {
    const visible = new Set(['answered', 'submitted', 'pending'] as const);
    const groups = childrenOf({ kind: 'evaluation', ref }, session, visible);
    assert.deepEqual(groups.map((g) => g.kind === 'group' && [g.state, g.count]), [['pending', 1], ['answered', ids.length], ['submitted', 1]]);
    const pages = childrenOf({ kind: 'group', ref, state: 'answered', count: ids.length }, session, visible);
    assert.deepEqual(pages.map((p) => p.kind === 'page' && [p.page, p.count]), [[0, PAGE_SIZE], [1, 5]]);
    const shown = (node: TreeNode) => childrenOf(node, session, visible).map((n) => n.kind === 'trace' && n.trace.traceId);
    assert.deepEqual(shown(pages[1]!), ids.slice(PAGE_SIZE));
    assert.deepEqual(shown(pages[0]!), ids.slice(0, PAGE_SIZE));
    assert.deepEqual(shown({ kind: 'group', ref, state: 'submitted', count: 1 }), ['done']);
  });

  it('takes the selected traces still Responded, of the first one\'s evaluation, each once', () => {
    const picked = respondedUnder([trace('t0003'), trace('done'), trace('todo'), trace('t0001'), trace('t0003'), trace('t0002', other)], session);
    assert.deepEqual(picked, ['t0003', 't0001']);
  });

  it("marks an evaluation holding Responded answers for the menus (after hasFailed, which they also match)", () => {
    assert.match(contextValue({ kind: 'evaluation', ref: { ...ref, kind: 'benchmark', source: 'configured' } }, { ...session, isRunning: false } as EvaluationSession), /^evaluation:benchmark:idle:configured:hasResponded$/);
  });
});
