import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_KINDS, CLI_KINDS, RUN_OPTIONS, TARGET_KINDS, configFromFlags, flagsOfConfig, kindOf, parseRunConfig, specOf, targetIdentity, targetSettingsSchema } from '../../src/core';
import type { CliTargetType, KindKey, TargetConfig, TargetSpec } from '../../src/core';
import { parseCommandArgs } from '../../src/cli/args';
import { TARGET_OPTIONS } from '../../src/cli/targetOptions';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

const ROOT = join(__dirname, '..', '..', '..');
const read = (p: string) => JSON.parse(readFileSync(join(ROOT, p), 'utf8')) as Record<string, unknown>;
type Properties = Record<string, Record<string, unknown>>;
const settingsProperties = () => (read('package.json') as { contributes: { configuration: { properties: Properties } } }).contributes.configuration.properties;

/** A value for a key, inside its bounds, of its type. */
function sample(key: KindKey): unknown {
  switch (key.type) {
    case 'string':
      return key.url ? 'https://model.example/v1?team=a' : `${key.name} value, with spaces`;
    case 'integer':
      return key.max !== undefined ? Math.min(key.max, (key.min ?? 0) + 2) : (key.min ?? 0) + 2;
    case 'number':
      return ((key.min ?? 0) + (key.max ?? 2)) / 2;
    case 'boolean':
      return true;
    case 'stringMap':
      // A variable for each secret name (secretHeaders', secretQuery's sample below).
      return key.name === 'headerEnv' || key.name === 'queryEnv' ? { 'X-Api-Key': 'MY_KEY_VAR' } : { 'x-team': 'blue' };
    case 'stringList':
      return ['X-Api-Key'];
  }
}

/** A kind's config with every key the CLI and a config file take set. */
function fullConfig(type: CliTargetType): TargetConfig {
  const config: Record<string, unknown> = { type };
  for (const key of kindOf(type).keys) if (key.only !== 'settings') config[key.name] = sample(key);
  return config as TargetConfig;
}

/** The flags as the CLI parses them (its real option table), read back into a config. */
function throughFlags(config: TargetConfig): TargetConfig {
  const args = flagsOfConfig(config as Parameters<typeof flagsOfConfig>[0]);
  const values = parseCommandArgs(args, TARGET_OPTIONS);
  return configFromFlags(config.type as CliTargetType, values);
}

describe('target kinds: one descriptor each, everything derived from it', () => {
  it("package.json's evalRunner.target schema and its texts are the descriptors' (run scripts/targetSettings.mjs after a change)", () => {
    const { schema, nls } = targetSettingsSchema();
    assert.deepEqual(settingsProperties()['evalRunner.target'], schema, 'package.json differs: npx tsc -p . && node scripts/targetSettings.mjs');
    const texts = read('package.nls.json');
    for (const [key, text] of Object.entries(nls)) assert.equal(texts[key], text, key);
    // Every kind's keys, not only the python ones: the settings editor completes and checks each kind's.
    const kinds = (schema.allOf as Array<{ if: { properties: { type: { const: string } } }; then: { properties: Record<string, unknown> } }>).map((k) => k.if.properties.type.const);
    assert.deepEqual(kinds, ALL_KINDS.map((k) => k.type));
    const openai = (schema.allOf as Array<{ then: { properties: Record<string, unknown> } }>)[1]!.then.properties;
    for (const key of ['baseUrl', 'model', 'temperature', 'maxTokens', 'stream', 'headers', 'secretHeaders']) assert.ok(key in openai, key);
    assert.ok(!('apiKeyEnv' in openai), "a config file's key only (the editor keeps the key in secret storage)");
  });

  it('the check fails when a descriptor gains a key package.json does not declare', () => {
    const keys = TARGET_KINDS.http.keys as KindKey[];
    keys.push({ name: 'timeoutMs', type: 'integer', min: 1, description: 'a new key' });
    try {
      assert.notDeepEqual(settingsProperties()['evalRunner.target'], targetSettingsSchema().schema);
    } finally {
      keys.pop();
    }
    assert.deepEqual(settingsProperties()['evalRunner.target'], targetSettingsSchema().schema);
  });

  it("package.json's run settings have the core's defaults and ranges (RUN_OPTIONS), the CLI's too", () => {
    const p = settingsProperties();
    const same = (setting: string, option: { default: number | undefined; min: number; max: number }, max = true) => {
      assert.equal(p[setting]!.default ?? undefined, option.default, `${setting} default`);
      assert.equal(p[setting]!.minimum, option.min, `${setting} minimum`);
      if (max && p[setting]!.maximum !== undefined) assert.equal(p[setting]!.maximum, option.max, `${setting} maximum`);
    };
    same('evalRunner.concurrency', RUN_OPTIONS.concurrency);
    same('evalRunner.waitForGenerationSeconds', RUN_OPTIONS.waitForGenerationSeconds);
    same('evalRunner.servicePatience', RUN_OPTIONS.servicePatienceSeconds);
    same('evalRunner.targetRetries', RUN_OPTIONS.targetRetries);
  });

  it('every kind round-trips through its CLI flags: spec → flags → spec, and a config with its secret sources', () => {
    for (const kind of CLI_KINDS) {
      const config = fullConfig(kind.type as CliTargetType);
      const spec = specOf(config)!;
      const flags = flagsOfConfig(config as Parameters<typeof flagsOfConfig>[0]);
      for (const key of kind.keys.filter((k) => k.flag && k.only !== 'settings')) assert.ok(flags.includes(`--${key.flag!}`), `${kind.type}: --${key.flag!} is written`);
      assert.deepEqual(specOf(throughFlags(spec)), spec, `${kind.type}: spec → flags → spec`);
      assert.deepEqual(throughFlags(config), config, `${kind.type}: config → flags → config`);
      // And the same config is what a --config file may hold.
      assert.deepEqual(parseRunConfig({ target: config }, 'test').target, config, `${kind.type}: a config file takes every key`);
    }
  });

  it("a config file refuses a key of the editor's settings only, and the editor's kinds", () => {
    assert.throws(() => parseRunConfig({ target: { type: 'vscode-lm', model: 'x' } }, 'test'), /must be echo, openai, http, command, python or worker/);
    assert.throws(() => parseRunConfig({ target: { type: 'echo', model: 'x' } }, 'test'), /unknown setting "model"/);
  });

  it("lists every kind and every kind's flags in `run --help`", async () => {
    const help = (await cli(['run', '--help'])).stdout;
    for (const kind of CLI_KINDS) {
      assert.match(help, new RegExp(`^ {2}${kind.type} {2,}\\S`, 'm'), kind.type);
      for (const flag of [...kind.keys.filter((k) => k.flag && k.only !== 'settings').map((k) => k.flag!), ...(kind.flags ?? []).map((f) => f.flag)]) {
        assert.match(help, new RegExp(`^ {4}--${flag}\\b`, 'm'), `${kind.type}: --${flag}`);
      }
    }
    assert.doesNotMatch(help, /vscode-lm|manual/, "the editor's kinds are not the CLI's");
  });

  it('keeps the fingerprints journals already hold (the hash of the same parts as before the descriptors)', () => {
    const old = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts.map((p) => p ?? null))).digest('hex').slice(0, 16);
    const dir = tempDir();
    writeFileSync(join(dir, 'model.py'), 'def answer(p):\n    return p\n');
    const hash = createHash('sha256').update(readFileSync(join(dir, 'model.py'))).digest('hex').slice(0, 6);
    const cases: Array<[TargetSpec, unknown[]]> = [
      [{ type: 'echo' }, ['echo']],
      [{ type: 'openai', baseUrl: 'https://m.example/v1/?key=s', model: 'm', temperature: 0 }, ['openai', 'https://m.example/v1?key=…', 'm', undefined, 0, undefined]],
      [{ type: 'http', url: 'https://h.example/a', answerPath: 'x', ssePath: 'd' }, ['http', 'POST', 'https://h.example/a', undefined, 'x', 'd']],
      [{ type: 'command', command: 'cat' }, ['command', 'cat']],
      [{ type: 'worker', command: 'node w.js', workers: 2 }, ['worker', 'node w.js']],
      [{ type: 'vscode-lm', model: 'gpt' }, ['vscode-lm', 'gpt']],
      [{ type: 'python', file: 'model.py', python: 'python3', batchSize: 4 }, ['python', 'model.py', 'answer', 'python3', hash, 'batch 4']],
    ];
    for (const [spec, parts] of cases) assert.equal(targetIdentity(spec, dir).fingerprint, old(parts), spec.type);
  });
});
