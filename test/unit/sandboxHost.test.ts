import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { KIND_ROUTES } from '../../src/api/evaluationKinds';
import { answeredHostCheck, answeredNames, isAnsweredHost, isLoopbackHost } from '../../src/sandbox/hostCheck';
import { startSandbox } from '../../src/sandbox/server';
import type { Sandbox } from '../../src/sandbox/server';
import { cli } from './helpers/cli';

/** One request to the sandbox's port on 127.0.0.1 (never elsewhere), naming `host` in its Host header. */
function send(port: number, host: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host, ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What a route answers with the token, where that is not 200 (everyRoute's upload is empty; its file unknown). */
const WITH_TOKEN: Record<string, number> = { '/v1/files': 400, '/v1/files/file-none/content': 404 };

/** Every route of the sandbox: the service's four, the Batch API, the echo model, the pages. */
function everyRoute(token: string): Array<{ method: string; path: string; headers: Record<string, string>; body?: string }> {
  const auth = { authorization: `Bearer ${token}` };
  const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };
  return [
    { method: 'GET', path: `${KIND_ROUTES.benchmark.listPath}?evaluationId=1`, headers: auth },
    { method: 'POST', path: KIND_ROUTES.benchmark.submitPath, headers: form, body: 'evaluationId=1&traceId=bench-0000&llmResponse=a' },
    { method: 'GET', path: `${KIND_ROUTES.robustness.listPath}?evaluationId=2`, headers: auth },
    { method: 'POST', path: KIND_ROUTES.robustness.submitPath, headers: form, body: 'evaluationId=2&traceId=adv-0000&advResponse=a' },
    { method: 'GET', path: '/v1/batches', headers: auth },
    { method: 'POST', path: '/v1/files', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--' },
    { method: 'GET', path: '/v1/files/file-none/content', headers: auth },
    { method: 'POST', path: '/v1/chat/completions', headers: { ...auth, 'content-type': 'application/json' }, body: '{"messages":[{"role":"user","content":"hi"}]}' },
    { method: 'GET', path: '/', headers: {} },
    { method: 'GET', path: '/evaluations/1', headers: {} },
    { method: 'GET', path: '/healthz', headers: {} },
  ];
}

describe('the sandbox stays on this machine', function () {
  this.timeout(20_000);
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('refuses a request addressed to another name (DNS rebinding) with 403 on every route; its own names work', async () => {
    sandbox = await startSandbox({ port: 0, generationSeconds: 0 });
    const port = Number(new URL(sandbox.baseUrl).port);
    for (const route of everyRoute(sandbox.token)) {
      for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`, `127.0.0.1:${port}@evil.example`]) {
        const r = await send(port, host, route.method, route.path, route.headers, route.body);
        assert.equal(r.status, 403, `${route.method} ${route.path} with Host "${host}"`);
        assert.match(r.text, /answers only requests addressed to 127\.0\.0\.1, localhost, \[::1\] \(the Host header\)/);
        assert.ok(!r.text.includes('bench-0000') && !r.text.includes(sandbox.token), 'a refusal shows nothing of the service');
      }
      // Any port: a forwarded one (ssh -L, an editor's port forwarding) reaches the sandbox under another number.
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `localhost:${port + 1}`]) {
        const r = await send(port, host, route.method, route.path, route.headers, route.body);
        assert.notEqual(r.status, 403, `${route.method} ${route.path} with Host "${host}" (${r.text.slice(0, 200)})`);
        assert.ok(r.status < 500, `${route.method} ${route.path}: ${r.status}`);
      }
    }
    assert.equal(sandbox.submissionsOf(1, 'bench-0000'), 5, 'only the requests to its own names submitted');
    assert.equal(sandbox.stats.modelCalls, 5);
  });

  it('answers loopback names and the address it listens on, whatever the port', () => {
    for (const host of ['127.0.0.1', '127.9.8.7', 'localhost', 'LocalHost', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '127.0.0.1.nip.io', 'localhost.example', '::ffff:10.0.0.1', '']) assert.ok(!isLoopbackHost(host), host);
    const names = answeredNames('127.0.0.1');
    for (const host of ['127.0.0.1:8787', '127.0.0.1', 'localhost:80', 'LOCALHOST:1', '[::1]:8787']) assert.ok(isAnsweredHost(host, names), host);
    for (const host of [undefined, '', 'evil.example:8787', 'localhost.:8787', '[::1]evil', '::1', 'localhost:8787:1', '127.0.0.1:x', '127.0.0.2:8787']) assert.ok(!isAnsweredHost(host, names), String(host));
    assert.ok(isAnsweredHost('[::1]:9', answeredNames('::1')) && isAnsweredHost('[::]:9', answeredNames('::')));
    assert.ok(isAnsweredHost('0.0.0.0:9000', answeredNames('0.0.0.0')) && isAnsweredHost('my-box.lan:9000', answeredNames('My-Box.lan')));
    // The server's check remembers the headers it answered, and only those, past the number it keeps.
    const check = answeredHostCheck(names);
    for (let port = 1; port <= 100; port++) assert.ok(check(`localhost:${port}`) && check(`localhost:${port}`) && !check(`evil.example:${port}`) && !check(`evil.example:${port}`), String(port));
    for (const host of [undefined, '', 'localhost.:8787', '127.0.0.2:8787', 'LOCALHOST:1']) assert.equal(check(host), host === 'LOCALHOST:1', String(host));
  });

  it('beyond loopback, every route but /healthz needs the token, and the pages are loopback-only (sent to 127.0.0.1 only)', async () => {
    const token = 'a-token-of-my-own-0123456789';
    sandbox = await startSandbox({ host: '0.0.0.0', port: 0, token, generationSeconds: 0 });
    const port = Number(new URL(sandbox.baseUrl).port);
    const host = `127.0.0.1:${port}`;
    const isPage = (path: string) => !path.startsWith('/api/') && !path.startsWith('/v1/') && path !== '/healthz';
    for (const route of everyRoute(token)) {
      const { authorization: _, ...bare } = route.headers;
      for (const headers of [bare, { ...bare, authorization: 'Bearer sandbox-token' }, { ...bare, authorization: token }]) {
        const r = await send(port, host, route.method, route.path, headers, route.body);
        if (route.path === '/healthz') assert.equal(r.status, 200);
        else assert.equal(r.status, isPage(route.path) ? 403 : 401, `${route.method} ${route.path} with ${headers.authorization ?? 'no Authorization'}: ${r.text.slice(0, 200)}`);
        assert.ok(!/bench-0000|adv-0000|"hi"|Summarise in two sentences/.test(r.text), `${route.method} ${route.path}: a refusal shows no prompt or answer`);
      }
      const r = await send(port, host, route.method, route.path, route.headers, route.body);
      if (isPage(route.path)) assert.match(r.text, /Process Details pages are served on loopback only/, `${route.path} even with the token: a browser sends none`);
      // With the token each route answers as on loopback: an empty upload is malformed, an unknown file not found.
      else assert.equal(r.status, WITH_TOKEN[route.path] ?? 200, `${route.method} ${route.path} with the token: ${r.text.slice(0, 200)}`);
    }
    const chat = await send(port, host, 'POST', '/v1/chat/completions', { authorization: 'Bearer nope', 'content-type': 'application/json' }, '{"messages":[{"role":"user","content":"hi"}]}');
    assert.deepEqual((JSON.parse(chat.text) as { error: { code: string } }).error.code, 'invalid_api_key', 'refused as OpenAI refuses a key');
    assert.equal(sandbox.submissionsOf(1, 'bench-0000'), 1, 'only the request with the token submitted');
    assert.equal(sandbox.stats.modelCalls, 1, 'only the request with the token reached the echo model');
  });

  it('on loopback the echo model and the Batch API still answer without a key', async () => {
    sandbox = await startSandbox({ port: 0 });
    const port = Number(new URL(sandbox.baseUrl).port);
    const chat = await send(port, `127.0.0.1:${port}`, 'POST', '/v1/chat/completions', { 'content-type': 'application/json' }, '{"messages":[{"role":"user","content":"hi"}]}');
    assert.equal(chat.status, 200, chat.text);
    assert.equal((JSON.parse(chat.text) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, 'hi');
    assert.equal((await send(port, `localhost:${port}`, 'GET', '/v1/batches')).status, 200);
    assert.equal((await send(port, `localhost:${port}`, 'GET', '/evaluations/1')).status, 200);
  });

  it('will not serve the well-known token beyond loopback', async () => {
    await assert.rejects(startSandbox({ host: '0.0.0.0', port: 0 }), /needs a token of its own/);
    await assert.rejects(startSandbox({ host: '0.0.0.0', port: 0, token: 'sandbox-token' }), /needs a token of its own/);
  });
});

describe('eval-runner sandbox --host beyond loopback', function () {
  this.timeout(30_000);

  it('is refused without --token-env (exit 2, saying why and what to do), and with an unset or empty variable', async () => {
    // A sandbox that starts anyway is stopped at once (the test then fails on its exit code, not on a timeout).
    const stopIfListening = (child: ChildProcess) => child.stdout!.on('data', (c: Buffer) => c.toString('utf8').includes('listening') && child.kill('SIGTERM'));
    const refused = await cli(['sandbox', '--host', '0.0.0.0', '--port', '0'], {}, stopIfListening);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--host 0\.0\.0\.0 reaches beyond this machine.*sandbox-token/s);
    assert.match(refused.stderr, /--token-env NAME/);
    const unset = await cli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--token-env', 'MY_SANDBOX_TOKEN'], { MY_SANDBOX_TOKEN: undefined }, stopIfListening);
    assert.equal(unset.code, 2, unset.stderr);
    assert.match(unset.stderr, /MY_SANDBOX_TOKEN is not set/);
    const empty = await cli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--token-env', 'MY_SANDBOX_TOKEN'], { MY_SANDBOX_TOKEN: '' }, stopIfListening);
    assert.equal(empty.code, 2, empty.stderr);
    assert.match(empty.stderr, /MY_SANDBOX_TOKEN is (not set|empty)/);
    const argv = await cli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--token', 'my-own-token-in-argv'], {}, stopIfListening);
    assert.equal(argv.code, 2, argv.stderr);
    assert.ok(!argv.stderr.includes('my-own-token-in-argv'));
  });

  it('with --token-env, listens on 0.0.0.0 and accepts only that token (sent to 127.0.0.1 only)', async () => {
    const token = 'a-token-of-my-own-0123456789';
    let child: ChildProcess | undefined;
    let stdout = '';
    const first = new Promise<string>((resolve) => {
      const done = cli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--json', '--token-env', 'MY_SANDBOX_TOKEN'], { MY_SANDBOX_TOKEN: token }, (c) => {
        child = c;
        c.stdout!.on('data', (chunk: Buffer) => {
          stdout += chunk.toString('utf8');
          if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
        });
      });
      void done.then((r) => resolve(`exited ${r.code}: ${r.stderr}`));
    });
    const exited = new Promise<void>((resolve) => child!.on('close', () => resolve()));
    try {
      const firstLine = await first;
      const line = JSON.parse(firstLine) as { baseUrl: string; token?: string; tokenEnv?: string };
      const port = Number(new URL(line.baseUrl).port);
      assert.equal(new URL(line.baseUrl).hostname, '0.0.0.0');
      assert.equal(line.token, undefined, 'the token is never printed');
      assert.equal(line.tokenEnv, 'MY_SANDBOX_TOKEN');
      const list = `${KIND_ROUTES.benchmark.listPath}?evaluationId=1`;
      const own = await send(port, `127.0.0.1:${port}`, 'GET', list, { authorization: `Bearer ${token}` });
      assert.equal(own.status, 200, own.text);
      assert.equal((await send(port, `127.0.0.1:${port}`, 'GET', list, { authorization: 'Bearer sandbox-token' })).status, 401);
      assert.equal((await send(port, `0.0.0.0:${port}`, 'GET', list, { authorization: `Bearer ${token}` })).status, 200, 'the --host value is answered');
      assert.equal((await send(port, `evil.example:${port}`, 'GET', list, { authorization: `Bearer ${token}` })).status, 403);
      const chat = { path: '/v1/chat/completions', body: '{"messages":[{"role":"user","content":"hi"}]}', json: { 'content-type': 'application/json' } };
      assert.equal((await send(port, `127.0.0.1:${port}`, 'POST', chat.path, chat.json, chat.body)).status, 401, 'the echo model needs the token');
      assert.equal((await send(port, `127.0.0.1:${port}`, 'POST', chat.path, { ...chat.json, authorization: `Bearer ${token}` }, chat.body)).status, 200);
      assert.equal((await send(port, `127.0.0.1:${port}`, 'GET', '/v1/batches')).status, 401, 'the Batch API needs the token');
      assert.equal((await send(port, `127.0.0.1:${port}`, 'GET', '/evaluations/1', { authorization: `Bearer ${token}` })).status, 403, 'the pages are loopback-only');
    } finally {
      child?.kill('SIGTERM');
      await exited;
    }
    assert.ok(!stdout.includes(token), 'the token is in no output');
  });

  it('says in its banner and --help that beyond loopback every route needs the token and the pages stay on loopback', async () => {
    const help = await cli(['sandbox', '--help']);
    assert.match(help.stdout, /every route but \/healthz needs\s+"Authorization: Bearer <token>"/);
    assert.match(help.stdout, /Process Details pages are served on loopback only/);
    let stdout = '';
    const run = await cli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--token-env', 'MY_SANDBOX_TOKEN'], { MY_SANDBOX_TOKEN: 'a-token-of-my-own-0123456789' }, (c) =>
      c.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')).includes('Ctrl-C') && c.kill('SIGTERM')),
    );
    // Stopped as soon as it has spoken (maybe before its Ctrl-C handler is set): only its words count here.
    assert.match(run.stdout, /Process Details pages: served on loopback only \(--host 127\.0\.0\.1\); here every route but \/healthz needs the token/);
    assert.ok(!run.stdout.includes('/evaluations/1'), 'no link to a page it refuses');
  });
});
