import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { proxyFor, proxyFromEnv } from '../../src/api/proxy';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';
import { tempDir } from './helpers/runs';

/** A real forward proxy on loopback (the `proxy` package undici's own tests use), counting what it relays. */
async function startProxy(options: { credentials?: string } = {}) {
  const { createProxy } = await import('proxy');
  const server = createProxy(createServer());
  const tunnels: string[] = [];
  server.on('connect', (req: { url?: string }) => tunnels.push(req.url ?? ''));
  if (options.credentials) {
    const expected = `Basic ${Buffer.from(options.credentials).toString('base64')}`;
    server.authenticate = (req) => req.headers['proxy-authorization'] === expected;
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    tunnels,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

describe('proxies: the environment, as curl reads it', () => {
  it('reads lower case before upper case, falls back to HTTP_PROXY for https, and applies NO_PROXY like undici', () => {
    assert.equal(proxyFromEnv({}), undefined);
    assert.deepEqual(proxyFromEnv({ https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:2', NO_PROXY: 'x' }), { httpsProxy: 'http://a:1', noProxy: 'x' });
    assert.deepEqual(proxyFromEnv({ HTTP_PROXY: 'http://p:3' }), { httpProxy: 'http://p:3', httpsProxy: 'http://p:3' });
    const config = { httpProxy: 'http://user:pw@proxy.corp:3128', httpsProxy: 'http://user:pw@proxy.corp:3128', noProxy: 'localhost, .internal.example,10.1.2.3:8443' };
    assert.equal(proxyFor(config, new URL('https://api.openai.com/v1')), 'http://proxy.corp:3128', 'shown without credentials');
    assert.equal(proxyFor(config, new URL('http://localhost:8080/')), undefined);
    assert.equal(proxyFor(config, new URL('https://evals.internal.example/')), undefined, 'a subdomain of a NO_PROXY entry');
    assert.equal(proxyFor(config, new URL('https://10.1.2.3:8443/')), undefined);
    assert.equal(proxyFor(config, new URL('https://10.1.2.3:9443/')), 'http://proxy.corp:3128', 'the port must match');
    assert.equal(proxyFor({ ...config, noProxy: '*' }, new URL('https://anything/')), undefined);
  });
});

describe('proxies: the CLI through a real forward proxy on loopback', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let stateDir: string;
  const run = (env: Record<string, string | undefined>) =>
    cli(
      ['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir,
        '--target', 'openai', '--openai-base-url', `${sandbox.baseUrl}/v1`, '--model', 'sandbox-echo'],
      { EVAL_RUNNER_TOKEN: sandbox.token, HTTP_PROXY: undefined, HTTPS_PROXY: undefined, http_proxy: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined, ...env },
    );

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, benchmarkTraces: 6, evaluationSeconds: 0 });
    stateDir = tempDir();
  });
  afterEach(() => sandbox.close());

  it('runs through HTTP_PROXY: the service and the model both reached through CONNECT tunnels', async () => {
    const proxy = await startProxy();
    try {
      const r = await run({ HTTP_PROXY: proxy.url });
      assert.equal(r.code, 0, r.stderr);
      const hostPort = new URL(sandbox.baseUrl).host;
      assert.ok(proxy.tunnels.length >= 2, `one tunnel for the service, one for the model: ${proxy.tunnels.join(' ')}`);
      assert.ok(proxy.tunnels.every((t) => t === hostPort));
      assert.equal(sandbox.stats.submissions, 6);
      assert.equal(sandbox.stats.modelCalls, 6);
    } finally {
      await proxy.close();
    }
  });

  it('goes direct for hosts in no_proxy (lower case honoured too)', async () => {
    const proxy = await startProxy();
    try {
      const r = await run({ http_proxy: proxy.url, no_proxy: 'localhost,127.0.0.1' });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(proxy.tunnels, []);
      assert.equal(sandbox.stats.submissions, 6);
    } finally {
      await proxy.close();
    }
  });

  it('names the proxy, not the service, when the proxy refuses; credentials in the proxy URL work and are never shown', async () => {
    const proxy = await startProxy({ credentials: 'alice:pr0xy-s3cret' });
    try {
      const refused = await run({ HTTP_PROXY: proxy.url });
      assert.equal(refused.code, 4, refused.stderr);
      const said = `${refused.stdout}${refused.stderr}`;
      assert.match(said, new RegExp(`the proxy http://127\\.0\\.0\\.1:${proxy.port} refused the connection with HTTP 407 \\(Proxy Authentication Required`));
      assert.match(said, /Check the proxy \(HTTPS_PROXY \/ HTTP_PROXY/);
      assert.equal(sandbox.stats.submissions, 0);

      const withCredentials = `http://alice:pr0xy-s3cret@127.0.0.1:${proxy.port}`;
      const ok = await run({ HTTP_PROXY: withCredentials });
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(sandbox.stats.submissions, 6);
      for (const text of [refused.stdout, refused.stderr, ok.stdout, ok.stderr]) assert.ok(!text.includes('pr0xy-s3cret'), 'the password is never printed');
    } finally {
      await proxy.close();
    }
    // A new folder: with every trace submitted and the list journaled, a run has nothing to ask the service.
    stateDir = tempDir();
    const down = await run({ HTTP_PROXY: proxy.url });
    assert.equal(down.code, 4);
    assert.match(`${down.stdout}${down.stderr}`, new RegExp(`the proxy http://127\\.0\\.0\\.1:${proxy.port} could not be reached`));
  });

  it('reaches an https model behind the proxy with a private CA from NODE_EXTRA_CA_CERTS; without it, the certificate error is the endpoint’s', async () => {
    // A model endpoint whose certificate no public CA signed (it is its own CA), reached through a CONNECT tunnel.
    const certs = tempDir();
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(certs, 'key.pem'), '-out', join(certs, 'ca.pem')], { stdio: 'ignore' });
    const model = createHttpsServer({ key: readFileSync(join(certs, 'key.pem')), cert: readFileSync(join(certs, 'ca.pem')) }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const prompt = (JSON.parse(body) as { messages: Array<{ content: string }> }).messages.at(-1)!.content;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: `private: ${prompt}` } }] }));
      });
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    const modelUrl = `https://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    const proxy = await startProxy();
    const runModel = (env: Record<string, string | undefined>) =>
      cli(['run', '--base-url', sandbox.baseUrl, '--evaluation', '1', '--kind', 'benchmark', '--state-dir', stateDir,
        '--target', 'openai', '--openai-base-url', modelUrl, '--model', 'private', '--target-timeout', '10'],
        { EVAL_RUNNER_TOKEN: sandbox.token, HTTP_PROXY: proxy.url, HTTPS_PROXY: undefined, http_proxy: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined, ...env });
    try {
      const untrusted = await runModel({ NODE_EXTRA_CA_CERTS: undefined });
      assert.equal(untrusted.code, 1, untrusted.stderr);
      const said = `${untrusted.stdout}${untrusted.stderr}`;
      assert.match(said, new RegExp(`The model endpoint https://127\\.0\\.0\\.1:\\d+ could not be reached \\[(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\\]`));
      assert.ok(!said.includes('the proxy'), 'the proxy is not blamed for the endpoint’s certificate');
      const trusted = await runModel({ NODE_EXTRA_CA_CERTS: join(certs, 'ca.pem') });
      assert.equal(trusted.code, 0, trusted.stderr);
      assert.ok(proxy.tunnels.includes(new URL(modelUrl).host), 'the https model was reached through the tunnel');
      assert.match(sandbox.answerOf(1, 'bench-0000') ?? '', /^private: /);
    } finally {
      await proxy.close();
      model.closeAllConnections();
      await new Promise((resolve) => model.close(resolve));
    }
  });
});
