import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configToArgs, parseRunConfig, runCommandLine } from '../../src/core/options/runConfig';
import { RUN_SETTINGS, RUN_SETTING_NAMES } from '../../src/core/options/runSettings';
import type { RunSetting } from '../../src/core/options/runSettings';
import { parseCommandArgs } from '../../src/cli/args';
import { RUN_FLAGS, runOptionsOf } from '../../src/cli/runFlags';
import { costChoices } from '../../src/cli/costFlags';
import { resolveSettings, runConfigFor } from '../../src/extension/settings/settingsModel';

const ROOT = join(__dirname, '..', '..', '..');

interface Declared {
  type: string | string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  enum?: string[];
}
/** package.json's settings, without the `evalRunner.` prefix. */
const declared = (): Record<string, Declared> => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, Declared> } } };
  return Object.fromEntries(Object.entries(pkg.contributes.configuration.properties).map(([key, value]) => [key.replace(/^evalRunner\./, ''), value]));
};
/** The settings with shapes of their own (runConfig.ts), not run settings. */
const SHAPED = ['baseUrl', 'evaluations', 'target'];

/** The settings the editor alone uses: Copy as CLI Command leaves them out. */
const EDITOR_ONLY = ['keepRunsAlive', 'processDetailsUrl', 'sandbox.port', 'estimateThresholdUsd'];
/** Every other setting, and the CLI flag that reads it (as the CLI's own help says). */
const CLI_READS: Record<string, string> = {
  concurrency: 'concurrency',
  maxRequestsPerMinute: 'max-rpm',
  reviewBeforeSubmit: 'no-submit',
  onTargetError: 'on-target-error',
  requestEncoding: 'encoding',
  waitForGenerationSeconds: 'wait-for-generation',
  servicePatience: 'service-patience',
  targetRetries: 'target-retries',
  maxListMegabytes: 'max-list-mb',
  stateDir: 'state-dir',
  skippedAnswer: 'skipped-answer',
  maxErrorRate: 'max-error-rate',
  budgetUsd: 'budget',
  prices: 'prices',
};

/** A value other than the setting's default, within what package.json allows. */
function otherValue(key: string, d: Declared): unknown {
  if (d.enum) return d.enum.find((v) => v !== d.default);
  if (key === 'maxErrorRate') return 'off';
  if (d.type === 'object') return { 'gpt-4o': { input: 2.5, output: 10 } };
  if (d.type === 'boolean') return d.default !== true;
  if (d.type === 'string') return `/tmp/custom-${key}`;
  const value = ((d.default as number | null) ?? d.minimum ?? 0) + 1;
  assert.ok(d.maximum === undefined || value <= d.maximum, key);
  return value;
}

describe('run settings: one definition (RUN_SETTINGS), the rest derived', () => {
  it("package.json declares each run setting as RUN_SETTINGS defines it, and no other", () => {
    const p = declared();
    assert.deepEqual(Object.keys(p).filter((k) => !SHAPED.includes(k)).sort(), [...RUN_SETTING_NAMES].sort());
    for (const name of RUN_SETTING_NAMES) {
      const setting: RunSetting = RUN_SETTINGS[name];
      const d = p[name]!;
      const type = { integer: 'integer', boolean: 'boolean', choice: 'string', text: 'string', decimal: 'number', prices: 'object' }[setting.type];
      assert.deepEqual(d.type, setting.default === undefined ? [type, 'null'] : type, `${name}: type`);
      assert.deepEqual(d.default ?? undefined, setting.default, `${name}: default`);
      if (setting.type === 'choice') assert.deepEqual(d.enum, setting.values, `${name}: values`);
      if (setting.type === 'integer' || setting.type === 'decimal') {
        assert.equal(d.minimum, setting.min, `${name}: minimum`);
        assert.equal(d.maximum, setting.max, `${name}: maximum`);
      }
    }
  });

  it('names the editor-only settings; every other one has the flag the CLI reads it with', () => {
    assert.deepEqual(RUN_SETTING_NAMES.filter((name) => !('flag' in RUN_SETTINGS[name])).sort(), [...EDITOR_ONLY].sort());
    assert.deepEqual(Object.keys(declared()).filter((k) => !SHAPED.includes(k) && !EDITOR_ONLY.includes(k)).sort(), Object.keys(CLI_READS).sort());
    for (const [name, flag] of Object.entries(CLI_READS)) assert.equal((RUN_SETTINGS as Record<string, { flag?: string }>)[name]!.flag, flag, name);
  });

  it('Copy as CLI Command keeps every setting the CLI reads, never a secret; the editor-only settings stay out', () => {
    const p = declared();
    const values: Record<string, unknown> = Object.fromEntries(Object.keys(p).filter((k) => !SHAPED.includes(k)).map((k) => [k, otherValue(k, p[k]!)]));
    // A credential still written in the settings: a header's value, a key in the URL's query.
    values.target = { type: 'http', url: 'https://m.example/v1?key=QUERY-SECRET-1', answerPath: 'a', headers: { Authorization: 'Bearer HEADER-SECRET-2' } };
    const settings = resolveSettings({ effective: (key) => values[key], user: () => undefined }, true, '/unused');
    const config = runConfigFor({ baseUrl: 'https://svc.example', evaluationId: 1, kind: 'benchmark', label: 'b' }, settings, false);
    assert.ok(!('problem' in config));
    for (const name of EDITOR_ONLY) assert.ok(!(name in config), `${name} is the editor's alone`);
    const args = configToArgs(config, [], 'run');
    const flags = parseCommandArgs(args, RUN_FLAGS) as Record<string, string | boolean | undefined>;
    for (const [name, flag] of Object.entries(CLI_READS)) {
      assert.deepEqual((config as Record<string, unknown>)[name], values[name], `${name} in the copied config`);
      // A table travels as its JSON, anything else as its text.
      const typed = JSON.stringify(values[name]).replace(/^"(.*)"$/, '$1');
      assert.equal(flags[flag], typeof values[name] === 'boolean' ? true : typed, `--${flag} on the copied line`);
      assert.ok(runCommandLine(config).includes(`--${flag}`), `--${flag} in the command line`);
    }
    // And the CLI reads them as the editor would run them.
    const options = runOptionsOf(flags);
    assert.equal(options.servicePatienceMs, (values.servicePatience as number) * 1000);
    assert.equal(options.targetRetries, values.targetRetries);
    assert.equal(options.concurrency, values.concurrency);
    assert.equal(options.maxErrorRate, 'off');
    for (const text of [JSON.stringify(config), runCommandLine(config)]) assert.ok(!/SECRET/.test(text), text);
  });

  it('a settings block pasted whole is a config file: every run setting taken, the editor-only ones ignored', () => {
    const config = parseRunConfig({ servicePatience: 60, targetRetries: null, keepRunsAlive: false, processDetailsUrl: '{baseUrl}/x', reviewBeforeSubmit: true }, 'test');
    assert.deepEqual(configToArgs(config, [], 'run'), ['--no-submit', '--service-patience', '60']);
    assert.deepEqual(configToArgs(parseRunConfig({ targetRetries: 3, stateDir: '/s', maxListMegabytes: 9 }, 'test'), [], 'journal'), ['--max-list-mb', '9', '--state-dir', '/s']);
    assert.throws(() => parseRunConfig({ targetRetries: 21 }, 'test'), /test: targetRetries: /);
    assert.throws(() => parseRunConfig({ onTargetError: 'ignore' }, 'test'), /test: onTargetError: /);
  });

  it("a config's budget and prices reach the run as the settings' flags: the table prices the model, the budget holds", () => {
    const config = parseRunConfig({ budgetUsd: 0.25, prices: { 'my-model': { input: 3, output: 12.5 } }, estimateThresholdUsd: 9 }, 'test');
    const args = configToArgs(config, [], 'run');
    assert.deepEqual(args, ['--budget', '0.25', '--prices', '{"my-model":{"input":3,"output":12.5}}'], 'the threshold is the editor\'s alone');
    const flags = parseCommandArgs(args, RUN_FLAGS) as Record<string, string | boolean | undefined>;
    const cost = costChoices(flags, { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'my-model' });
    assert.deepEqual(cost.price, { src: 'override', in: 3, out: 12.5 });
    assert.equal(cost.budgetUsd, 0.25);
    assert.throws(() => parseRunConfig({ budgetUsd: -1 }, 'test'), /test: budgetUsd: /);
    assert.throws(() => parseRunConfig({ prices: { m: { input: 'free', output: 1 } } }, 'test'), /test: prices\.m\.input: /);
  });
});
