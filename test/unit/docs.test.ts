import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { RUN_SETTINGS, RUN_SETTING_NAMES } from '../../src/core/options/runSettings';
import type { RunSetting } from '../../src/core/options/runSettings';
import { cli } from './helpers/cli';

const ROOT = join(__dirname, '..', '..', '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const readme = () => read('README.md');
/** A page's headings, code blocks left out (a `# comment` there is none). */
const headings = (text: string) => [...text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,4} (.+)$/gm)].map((m) => m[1]!);
/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) => heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
/** The text under a heading, to the next heading of the same level or above. */
const section = (text: string, heading: string) => text.split(`\n${heading}\n`)[1]!.split(new RegExp(`\\n#{1,${heading.indexOf(' ')}} `))[0]!;
const PAGES = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);

describe('the README is for users; its reference pages are under docs/', () => {
  it('opens with the demo and the tests, then the sandbox, before anything needs a real service', () => {
    const lines = readme().split('\n');
    assert.deepEqual(lines.slice(0, 6), ['# Eval Runner', '', '```sh', 'npm ci && npm run demo       # main job: the whole loop offline, on an embedded sandbox', 'npm ci && npm test           # every test: type-check, lint, build, all suites', '```']);
    assert.equal(headings(readme())[1], 'First: the sandbox');
    // The first CLI run a reader meets runs against the sandbox with the echo target: no service, no key.
    const firstRun = lines.find((l) => /(cli\.js|eval-runner) run /.test(l))!;
    assert.match(firstRun, /--base-url http:\/\/127\.0\.0\.1:8787 .*--target echo/);
    assert.ok(lines.indexOf(firstRun) < lines.indexOf('## Installing'));
  });

  it('stays a page a user reads, with a line and a link for each reference page', () => {
    const lines = readme().split('\n').length;
    assert.ok(lines <= 330, `README.md is ${lines} lines`);
    for (const page of ['docs/cli.md', 'docs/settings.md', 'docs/security.md', 'docs/ci.md', 'docs/architecture.md']) {
      assert.ok(existsSync(join(ROOT, page)), page);
    }
    const listed = section(readme(), '## Documentation');
    for (const page of PAGES.filter((p) => p !== 'docs/runner-protocol.md')) {
      assert.match(listed, new RegExp(`^- \\[${page}\\]\\(${page}\\): \\S`, 'm'), `the README's Documentation lists ${page}`);
    }
  });

  it('moves the contributor sections to CONTRIBUTING.md and links it; the notes for users stay', () => {
    const contributing = read('CONTRIBUTING.md');
    for (const h of ['Tests', 'Benchmark', 'Layout']) {
      assert.ok(!headings(readme()).includes(h), `README still has ${h}`);
      assert.ok(headings(contributing).includes(h), `CONTRIBUTING.md lacks ${h}`);
    }
    assert.match(contributing, /npm run bench/);
    assert.match(contributing, /test\/unit\/layering\.test\.ts/);
    assert.match(readme(), /\[CONTRIBUTING\.md\]\(CONTRIBUTING\.md\)/);
    assert.ok(headings(read('docs/runs.md')).includes('Runs that need no one watching'));
    // What Windows and macOS would do differently is said in one place, which the README links.
    const notRun = section(read('docs/ci.md'), '## What was not run here');
    for (const topic of ['Your own code as the target', 'The runner process', 'Security']) assert.match(notRun, new RegExp(`\\*\\*${topic}\\.\\*\\*`));
    assert.match(readme(), /\]\(docs\/ci\.md#what-was-not-run-here\)/);
  });

  it("says what the client can and cannot see of the service's evaluation", () => {
    const text = section(read('docs/runs.md'), "## What the client sees of the service's evaluation");
    assert.match(text, /\*\*Evaluated\*\*.*are the service's: the client never sees them/s);
    assert.match(text, /Submitted/);
    assert.match(text, /\*\*Open Process Details on the Service\*\*/);
    assert.match(text, /\*\*Run Details\*\*/);
    assert.match(readme(), /\]\(docs\/runs\.md#what-the-client-sees-of-the-services-evaluation\)/);
  });

  it('ships every image the README links (.vscodeignore is an allow-list), and only those', () => {
    const images = [...readme().matchAll(/\]\((docs\/[^)]+\.png)\)/g)].map((m) => m[1]!);
    assert.ok(images.length >= 3 && images.length <= 6, `${images.length} images`);
    const allowed = read('.vscodeignore').split('\n').filter((l) => l.startsWith('!docs/')).map((l) => l.slice(1));
    assert.deepEqual([...new Set(images)].sort(), allowed.sort());
    for (const image of images) assert.ok(read(image).length > 0, image);
  });

  it("ships the pages' one built stylesheet, not the ones it is built from, and what package.json shows from media/", async function () {
    this.timeout(60_000);
    // The VSIX's files as vsce reads .vscodeignore: an allowed folder ships all it holds (`!media/**`), so the
    // stylesheets scripts/build.mjs inlines into page.css and the report live outside media/. vsce lists a copy of
    // what could ship a stylesheet: walking the checkout took 4 s (.vscode-test), which the suite's set-up fills meanwhile.
    const copy = mkdtempSync(join(tmpdir(), 'vsix-files-'));
    try {
      for (const path of ['package.json', '.vscodeignore', 'media', 'src/webview/styles']) cpSync(join(ROOT, path), join(copy, path), { recursive: true });
      const { listFiles, PackageManager } = await import('@vscode/vsce');
      const packaged = await listFiles({ cwd: copy, packageManager: PackageManager.None });
      assert.deepEqual(packaged.filter((f) => f.endsWith('.css')), ['media/webview/page.css'], 'the stylesheets in the VSIX (node scripts/build.mjs)');
      const shown = [...new Set([...read('package.json').matchAll(/"(media\/[^"]+)"/g)].map((m) => m[1]!))];
      assert.ok(shown.some((f) => f.startsWith('media/walkthrough/')), `package.json's media files: ${shown.join(', ')}`);
      assert.deepEqual([...shown, 'media/codicons/codicon.ttf'].filter((f) => !packaged.includes(f)), [], 'left out of the VSIX');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('links only to files and headings that exist', () => {
    const problems: string[] = [];
    for (const file of ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...PAGES]) {
      for (const [, target] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#');
        const linked = path ? normalize(join(dirname(file), path)) : file;
        if (!existsSync(join(ROOT, linked))) problems.push(`${file}: ${target} (no such file)`);
        else if (anchor && !headings(read(linked)).map(slug).includes(anchor)) problems.push(`${file}: ${target} (no such heading)`);
      }
    }
    assert.deepEqual(problems, []);
  });
});

describe('the reference pages keep in step with the code', function () {
  this.timeout(60_000);

  it('docs/cli.md names every command and every flag their --help names', async () => {
    const page = read('docs/cli.md');
    const commands = [...(await cli(['--help'])).stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
    assert.deepEqual(commands, ['run', 'prompts', 'submit', 'status', 'list', 'pause', 'resume', 'set', 'export', 'report', 'sandbox', 'demo', 'mcp']);
    const missing: string[] = [];
    for (const command of commands) {
      assert.match(page, new RegExp(`\\| \`${command}\` \\|`), `the command table lists ${command}`);
      const help = (await cli([command, '--help'])).stdout;
      for (const [flag] of help.matchAll(/--[a-z][a-z0-9-]*/g)) {
        if (!new RegExp(`\`${flag}(?![a-z0-9-])`).test(page)) missing.push(`${command} ${flag}`);
      }
    }
    assert.deepEqual([...new Set(missing)], []);
  });

  it("docs/cli.md's config file names every run setting: a flag's key with its flag, the editor's own as ignored", () => {
    const text = section(read('docs/cli.md'), '## The config file');
    const missing = RUN_SETTING_NAMES.filter((name) => {
      const { flag }: RunSetting = RUN_SETTINGS[name];
      return flag ? !text.includes(`| \`${name}\` | \`--${flag}\` |`) : !new RegExp(`\`${name}\`[^.]*ignored`).test(text.replace(/\n/g, ' '));
    });
    assert.deepEqual(missing, []);
  });

  it('docs/settings.md names every setting package.json declares', () => {
    const declared = Object.keys((JSON.parse(read('package.json')) as { contributes: { configuration: { properties: Record<string, unknown> } } }).contributes.configuration.properties);
    const page = read('docs/settings.md');
    assert.deepEqual(declared.filter((k) => !page.includes(`| \`${k}\` |`)), []);
  });

  it("CONTRIBUTING.md's layout table lists every folder of src/, test/, scripts/, media/ and docs/", () => {
    const table = section(read('CONTRIBUTING.md'), '## Layout');
    const listed = new Set([...table.matchAll(/`([a-z][\w/-]*\/)`/gi)].map((m) => m[1]!));
    const folders = (dir: string): string[] => [
      `${dir}/`,
      ...readdirSync(join(ROOT, dir), { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
        .flatMap((e) => folders(`${dir}/${e.name}`)),
    ];
    const all = ['src', 'test', 'scripts', 'media'].flatMap(folders).concat('docs/');
    assert.deepEqual(all.filter((f) => !listed.has(f)), []);
  });
});
