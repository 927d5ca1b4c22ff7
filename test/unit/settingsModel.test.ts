import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESTRICTED_SETTINGS, editorProxy, processDetailsUrl, resolveSettings } from '../../src/extension/settings/settingsModel';

const ROOT = join(__dirname, '..', '..', '..');

// What a cloned repository's .vscode/settings.json would say, and what the user set themselves.
const WORKSPACE: Record<string, unknown> = {
  baseUrl: 'https://attacker.example',
  target: { type: 'command', command: 'curl attacker.example' },
  processDetailsUrl: 'file:///etc/passwd',
  onTargetError: 'submit',
  reviewBeforeSubmit: false,
  concurrency: 256,
  waitForGenerationSeconds: 86_400,
  requestEncoding: 'multipart',
  budgetUsd: 1_000_000,
  prices: { 'gpt-4o': { input: 0, output: 0 } },
  estimateThresholdUsd: 1_000_000,
};
const USER: Record<string, unknown> = {
  baseUrl: 'https://evals.example.com',
  target: { type: 'echo' },
  reviewBeforeSubmit: true,
  concurrency: 4,
  budgetUsd: 5,
};
const values = { effective: (k: string) => WORKSPACE[k] ?? USER[k], user: (k: string) => USER[k] };

describe('settings in an untrusted workspace', () => {
  it('take every restricted setting from the user, never from the workspace', () => {
    const s = resolveSettings(values, false, '/state');
    assert.equal(s.baseUrl, 'https://evals.example.com');
    assert.deepEqual(s.target, { type: 'echo' });
    assert.equal(s.processDetailsUrl, '{baseUrl}/evaluations/{evaluationId}', 'the default, not the workspace file: URL');
    assert.equal(s.onTargetError, 'fail');
    assert.equal(s.reviewBeforeSubmit, true, "a workspace cannot turn the user's review off");
    assert.equal(s.concurrency, 4);
    assert.equal(s.waitForGenerationSeconds, 600);
    assert.equal(s.requestEncoding, 'multipart', 'an unrestricted setting still comes from the workspace');
    assert.equal(s.budgetUsd, 5, "a workspace cannot lift the user's budget");
    assert.deepEqual(s.prices, {}, 'nor make a model free');
    assert.equal(s.estimateThresholdUsd, 1, 'nor silence the estimate');
  });

  it('take the workspace values once the workspace is trusted', () => {
    const s = resolveSettings(values, true, '/state');
    assert.equal(s.baseUrl, 'https://attacker.example');
    assert.equal(s.concurrency, 256);
    assert.equal(s.reviewBeforeSubmit, false);
  });

  it('are every setting but the list of evaluations and the request encoding, as the README says', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, unknown> } } };
    const declared = Object.keys(pkg.contributes.configuration.properties).map((k) => k.replace(/^evalRunner\./, ''));
    assert.deepEqual(declared.filter((k) => k !== 'evaluations' && k !== 'requestEncoding').sort(), [...RESTRICTED_SETTINGS].sort());
  });

  it('are the same keys package.json declares as restrictedConfigurations', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
    };
    assert.deepEqual(
      [...pkg.capabilities.untrustedWorkspaces.restrictedConfigurations].sort(),
      RESTRICTED_SETTINGS.map((k) => `evalRunner.${k}`).sort(),
    );
  });
});

describe('the Process Details link', () => {
  const base = 'https://evals.example.com/root';
  it('opens only http(s) pages on the service origin', () => {
    assert.deepEqual(processDetailsUrl('{baseUrl}/evaluations/{evaluationId}?kind={kind}', base, 7, 'robustness'), {
      url: 'https://evals.example.com/root/evaluations/7?kind=robustness',
    });
    for (const template of ['file:///etc/passwd', 'vscode://some.extension/run', 'https://attacker.example/?u={baseUrl}', 'javascript:alert(1)', 'http://evals.example.com/x']) {
      const page = processDetailsUrl(template, base, 7, 'benchmark');
      assert.ok('problem' in page, `${template} was accepted`);
      assert.match(page.problem, /must lead to the service itself \(https:\/\/evals\.example\.com\)|not make a valid URL/);
    }
  });
});

describe("the editor's proxy: VS Code's http.* settings, else the environment", () => {
  it('uses http.proxy with http.noProxy, the authorization and strict-SSL choice, merged with NO_PROXY', () => {
    const env = { HTTPS_PROXY: 'http://env-proxy:8080', NO_PROXY: 'internal.example' };
    assert.deepEqual(
      editorProxy({ proxy: 'http://corp-proxy:3128', noProxy: ['localhost', 7, ''], proxyAuthorization: 'Basic abc', proxyStrictSSL: false }, env),
      { httpProxy: 'http://corp-proxy:3128', httpsProxy: 'http://corp-proxy:3128', noProxy: 'localhost,internal.example', authorization: 'Basic abc', strictSSL: false },
    );
  });
  it('falls back to the environment like VS Code, and is off when http.proxySupport is off or nothing is set', () => {
    assert.deepEqual(editorProxy({}, { https_proxy: 'http://env-proxy:8080' }), { httpsProxy: 'http://env-proxy:8080' });
    assert.equal(editorProxy({ proxy: 'http://corp-proxy:3128', proxySupport: 'off' }, {}), null);
    assert.equal(editorProxy({ proxy: '  ' }, {}), null);
  });
});
