import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CurlError, readCurl, withPromptAt } from '../../src/core/targets/http/curlRequest';

// Real-world curl lines, written as their sources write them: API docs, Postman's code snippet, and Chrome
// DevTools' "Copy as cURL" in its bash and cmd forms (its escaping rules reproduced by hand).

const OPENAI_DOCS = `curl https://api.openai.com/v1/chat/completions \\
  -H "Content-Type: application/json" \\
  -H "Authorization: Bearer $OPENAI_API_KEY" \\
  -d '{
    "model": "gpt-4.1",
    "messages": [
      {
        "role": "developer",
        "content": "You are a helpful assistant."
      },
      {
        "role": "user",
        "content": "Hello!"
      }
    ]
  }'`;

const ANTHROPIC_DOCS = `curl https://api.anthropic.com/v1/messages \\
     --header "x-api-key: $ANTHROPIC_API_KEY" \\
     --header "anthropic-version: 2023-06-01" \\
     --header "content-type: application/json" \\
     --data \\
'{
    "model": "claude-sonnet-4-20250514",
    "max_tokens": 1024,
    "messages": [
        {"role": "user", "content": "Hello, world"}
    ]
}'`;

const POSTMAN = `curl --location 'https://api.example.com/v1/generate' \\
--header 'Content-Type: application/json' \\
--header 'api-key: pm-7f3c2a' \\
--data '{
    "input": "{{prompt}}",
    "temperature": 0.2
}'`;

const CHROME_BASH = `curl 'https://chat.example.com/api/conversation' \\
  -H 'accept: */*' \\
  -H 'accept-language: en-US,en;q=0.9' \\
  -H 'authorization: Bearer eyJhbGciOi.abc.def' \\
  -H 'content-type: application/json' \\
  -b 'session=s3cr3t-cookie; theme=dark' \\
  -H 'origin: https://chat.example.com' \\
  -H 'priority: u=1, i' \\
  -H 'sec-ch-ua: "Chromium";v="128", "Not;A=Brand";v="24"' \\
  -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36' \\
  -H 'x-note: %PATH%' \\
  --data-raw $'{"prompt":"it\\'s 50% off\\u0021",\\n"stream":false}'`;

// The same request as Chrome's cmd form writes it: ^" quotes, \^" for a quote inside, ^ before other
// specials, ^% before a variable-like name, ^ then two newlines for a newline in a value.
const CHROME_CMD = `curl ^"https://chat.example.com/api/conversation^" ^
  -H ^"accept: */*^" ^
  -H ^"accept-language: en-US,en;q=0.9^" ^
  -H ^"authorization: Bearer eyJhbGciOi.abc.def^" ^
  -H ^"content-type: application/json^" ^
  -b ^"session=s3cr3t-cookie; theme=dark^" ^
  -H ^"origin: https://chat.example.com^" ^
  -H ^"priority: u=1, i^" ^
  -H ^"sec-ch-ua: ^\\^"Chromium^\\^";v=^\\^"128^\\^", ^\\^"Not;A=Brand^\\^";v=^\\^"24^\\^"^" ^
  -H ^"user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36^" ^
  -H ^"x-note: ^%^PATH^%^" ^
  --data-raw ^"^{^\\^"prompt^\\^":^\\^"it's 50^% off^!^\\^",^

^\\^"stream^\\^":false^}^"`;

describe('reading a curl command: the requests people paste', () => {
  it("OpenAI's docs: the key as $OPENAI_API_KEY in a secret header, the body's string fields to choose from", () => {
    const r = readCurl(OPENAI_DOCS);
    assert.equal(r.shell, 'bash');
    assert.equal(r.method, 'POST');
    assert.equal(r.url, 'https://api.openai.com/v1/chat/completions');
    assert.deepEqual(r.headers, { 'content-type': 'application/json' });
    assert.deepEqual(r.secretHeaders, { authorization: 'Bearer $OPENAI_API_KEY' });
    assert.deepEqual(r.variables, [{ name: 'OPENAI_API_KEY', in: 'header' }]);
    assert.equal(r.bodyTemplate, undefined);
    assert.deepEqual(
      r.promptFields.map((f) => [f.path, f.value]),
      [['$.model', 'gpt-4.1'], ['$.messages[0].role', 'developer'], ['$.messages[0].content', 'You are a helpful assistant.'], ['$.messages[1].role', 'user'], ['$.messages[1].content', 'Hello!']],
    );
    const resolved = readCurl(OPENAI_DOCS, { variable: (name) => (name === 'OPENAI_API_KEY' ? 'sk-test-123' : 'wrong') });
    assert.deepEqual(resolved.secretHeaders, { authorization: 'Bearer sk-test-123' });
  });

  it("Anthropic's docs: x-api-key from $ANTHROPIC_API_KEY is secret, anthropic-version is not; --data on the next line", () => {
    const r = readCurl(ANTHROPIC_DOCS, { variable: () => 'sk-ant-xyz' });
    assert.equal(r.url, 'https://api.anthropic.com/v1/messages');
    assert.deepEqual(r.headers, { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    assert.deepEqual(r.secretHeaders, { 'x-api-key': 'sk-ant-xyz' });
    const template = withPromptAt(r, '$.messages[0].content');
    assert.deepEqual(JSON.parse(template), { model: 'claude-sonnet-4-20250514', max_tokens: 1024, messages: [{ role: 'user', content: '{{prompt}}' }] });
    assert.equal(withPromptAt(r, 'messages.0.content'), template, 'the dotted form names the same field');
  });

  it("Postman's snippet: --location, a literal api-key header, {{prompt}} already in the body", () => {
    const r = readCurl(POSTMAN);
    assert.deepEqual(r.secretHeaders, { 'api-key': 'pm-7f3c2a' });
    assert.equal(r.bodyTemplate, '{\n    "input": "{{prompt}}",\n    "temperature": 0.2\n}');
    assert.deepEqual(r.promptFields, []);
    assert.deepEqual(r.ignored, ['--location']);
    const explicit = readCurl(`curl --location --request PUT 'https://api.example.com/v1/x' --header 'Content-Type: application/json' --data-raw '{"q": "{{prompt}}"}'`);
    assert.equal(explicit.method, 'PUT');
  });

  it("Chrome's bash and cmd forms read to the same request: cookies and authorization secret, $'…' escapes, quotes inside", () => {
    const bash = readCurl(CHROME_BASH);
    const cmd = readCurl(CHROME_CMD);
    assert.equal(bash.shell, 'bash');
    assert.equal(cmd.shell, 'cmd');
    assert.equal(bash.body, '{"prompt":"it\'s 50% off!",\n"stream":false}');
    assert.equal(bash.headers['x-note'], '%PATH%', 'not a variable: single-quoted in bash, ^-escaped in cmd');
    assert.equal(bash.headers['sec-ch-ua'], '"Chromium";v="128", "Not;A=Brand";v="24"');
    assert.deepEqual(bash.secretHeaders, { authorization: 'Bearer eyJhbGciOi.abc.def', cookie: 'session=s3cr3t-cookie; theme=dark' });
    assert.equal(bash.headers.accept, '*/*');
    for (const key of ['method', 'url', 'headers', 'secretHeaders', 'body'] as const) assert.deepEqual(cmd[key], bash[key], key);
    assert.deepEqual(bash.promptFields.map((f) => f.path), ['$.prompt']);
  });
});

describe('reading a curl command: quoting and continuation', () => {
  it("bash: $'…' escapes (\\x, \\u, octal, \\'), double quotes' backslashes, ${NAME}, a lone $ and a comment", () => {
    const r = readCurl(
      `# from the wiki\n$ curl -sS "https://h.example/p" -H "X-Note: a\\"b\\\\c\\d \\$HOME \${TEAM}" --data-raw $'{"v":"\\x41\\u00e9\\101\\'\\t"}' -H 'X-Price: $5 and $'`,
    );
    assert.equal(r.body, '{"v":"AéA\'\t"}');
    assert.equal(r.secretHeaders['x-note'], 'a"b\\c\\d $HOME ${TEAM}');
    assert.deepEqual(r.variables, [{ name: 'TEAM', in: 'header' }]);
    assert.equal(r.headers['x-price'], '$5 and $', 'single quotes keep $ as it is');
    assert.deepEqual(r.ignored, ['-s', '-S']);
  });

  it('bash: short options together (-sSL, -XPOST, -H attached), CRLF line ends, a pipe into jq, no scheme', () => {
    const r = readCurl(`curl -sSL -XPOST -H'X-Trace: 1' localhost:8080/gen \\\r\n  -d '{"q":"{{prompt}}"}' | jq .answer`);
    assert.equal(r.method, 'POST');
    assert.equal(r.url, 'http://localhost:8080/gen');
    assert.deepEqual(r.headers, { 'x-trace': '1' });
    assert.equal(r.bodyTemplate, '{"q":"{{prompt}}"}');
  });

  it('bash: a command whose newlines a paste turned into spaces still reads (backslash before a space at a word start)', () => {
    const flat = OPENAI_DOCS.replace(/\n/g, ' ');
    const r = readCurl(flat);
    assert.equal(r.url, 'https://api.openai.com/v1/chat/completions');
    assert.equal(r.promptFields.length, 5);
    assert.equal(readCurl('curl https://h/x -H X-A:one\\ two').headers['x-a'], 'one two', 'inside a word it is an escaped space');
  });

  it('cmd: "…" with "" and \\" for quotes, %NAME% variables, ^ before specials, ^-continued lines', () => {
    const r = readCurl(`curl "https://h.example/v1/x" ^\n -H "Authorization: Bearer %MODEL_KEY%" ^\n -H ^"X-Amp: a ^& b^" ^\n -d "{""q"": ""{{prompt}}"", \\"n\\": 1}"`);
    assert.equal(r.shell, 'cmd');
    assert.equal(r.body, '{"q": "{{prompt}}", "n": 1}');
    assert.deepEqual(r.headers, { 'x-amp': 'a & b' });
    assert.deepEqual(r.variables, [{ name: 'MODEL_KEY', in: 'header' }]);
    assert.equal(readCurl(`curl "https://h/x" -H "Authorization: Bearer %MODEL_KEY%"`, { shell: 'cmd', variable: () => 'k-1' }).secretHeaders.authorization, 'Bearer k-1');
  });
});

describe('reading a curl command: what curl itself would send', () => {
  it('-u as Basic, --oauth2-bearer, -b cookies joined, --json with its headers, several -d joined by &', () => {
    const r = readCurl(`curl --url https://h/x -u 'ann:$PW' -b a=1 --cookie b=2 --json '{"a":' --json '"{{prompt}}"}'`);
    assert.equal(r.secretHeaders.authorization, `Basic ${Buffer.from('ann:$PW').toString('base64')}`);
    assert.equal(r.secretHeaders.cookie, 'a=1; b=2');
    assert.deepEqual(r.headers, { 'content-type': 'application/json', accept: 'application/json' });
    assert.equal(r.bodyTemplate, '{"a":"{{prompt}}"}');
    assert.equal(readCurl(`curl https://h/x -d a=1 -d b=2`).body, 'a=1&b=2');
    assert.equal(readCurl(`curl https://h/x --oauth2-bearer tok9`).secretHeaders.authorization, 'Bearer tok9');
    assert.equal(readCurl(`curl https://h/x`).method, 'GET');
  });

  it('headers: secret by name (token, key, session) or by a variable; Name: removes, Name; sends empty; encoding and length dropped', () => {
    const r = readCurl(
      `curl https://h/x -H 'X-CSRF-Token: t' -H "X-Team: $TEAM_ID" -H 'X-Plain: p' -H 'X-Plain:' -H 'X-Empty;' -H 'Accept-Encoding: gzip, br' -H 'Content-Length: 99' -H 'Ocp-Apim-Subscription-Key: k'`,
    );
    assert.deepEqual(r.headers, { 'x-empty': '' });
    assert.deepEqual(Object.keys(r.secretHeaders).sort(), ['ocp-apim-subscription-key', 'x-csrf-token', 'x-team']);
  });

  it('says where each variable is: a header, the URL, its query, the body', () => {
    const r = readCurl(`curl "https://$HOST/v1/x?key=$QKEY" -H "K: $HKEY" -d "{\\"user\\": \\"$ME\\", \\"q\\": \\"{{prompt}}\\"}"`);
    assert.deepEqual(r.variables, [
      { name: 'HOST', in: 'url' },
      { name: 'QKEY', in: 'query' },
      { name: 'HKEY', in: 'header' },
      { name: 'ME', in: 'body' },
    ]);
    assert.equal(r.url, 'https://$HOST/v1/x', 'unread variables stay as written; the query one goes apart');
    assert.deepEqual(r.secretQuery, { key: '$QKEY' });
  });

  it("takes secret query parameters out of the URL: one that uses a variable, and a literal one named like a credential", () => {
    const gemini = `curl "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?alt=sse&key=$GEMINI_KEY&lang=en" -d '{"q": "{{prompt}}"}'`;
    const read = readCurl(gemini, { variable: () => 'AIza-SECRET' });
    assert.equal(read.url, 'https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?alt=sse&lang=en');
    assert.deepEqual(read.secretQuery, { key: 'AIza-SECRET' });
    const literal = readCurl(`curl "https://fn.example.net/api/x?code=abc%3D%3D&api_key=k1&access_token=t1&sig=s1&mode=fast&page=2#top" -d x`);
    assert.equal(literal.url, 'https://fn.example.net/api/x?mode=fast&page=2#top', 'plain parameters and the fragment stay');
    assert.deepEqual(literal.secretQuery, { code: 'abc==', api_key: 'k1', access_token: 't1', sig: 's1' }, 'decoded: sent encoded again');
    const byVariable = readCurl(`curl "https://h.example/x?team=$TEAM&q=1" -d x`, { variable: () => 'blue' });
    assert.deepEqual(byVariable.secretQuery, { team: 'blue' }, 'a variable makes any parameter secret');
    assert.equal(byVariable.url, 'https://h.example/x?q=1');
  });

  it('withPromptAt changes that one field where it stands: spacing and big numbers stay as written', () => {
    const r = readCurl(`curl https://h/x -d '{ "seed": 12345678901234567890, "a b": ["x", {"t": "keep"}, "y"] }'`);
    assert.equal(withPromptAt(r, '$["a b"][2]'), '{ "seed": 12345678901234567890, "a b": ["x", {"t": "keep"}, "{{prompt}}"] }');
    assert.throws(() => withPromptAt(r, '$.nope'), /no string field at "\$\.nope"\. Its string fields: \$\["a b"\]\[0\], \$\["a b"\]\[1\]\.t, \$\["a b"\]\[2\]\./);
    assert.deepEqual(readCurl(`curl https://h/x -d 'a=b'`).promptFields, [], 'a body that is not JSON has no fields');
  });
});

describe('reading a curl command: what it refuses, and how it says so', () => {
  const refusals: Array<[string, RegExp]> = [
    [`curl https://h/x -d '{"a": 1}`, /single quote \(\'\) is not closed/],
    [`curl "https://h/x`, /double quote \("\) is not closed/],
    [`curl https://h/x -F file=@a.png`, /multipart form \(-F\).*-d or --json/],
    [`curl https://h/x --frobnicate`, /--frobnicate is not one this reader knows/],
    [`curl https://h/x https://h/y`, /more than one URL/],
    [`curl https://h/x -H "Authorization: Bearer $(cat key.txt)"`, /command substitution/],
    [`curl https://h/x -d @body.json`, /read from a file/],
    [`curl 'https://h/x?q={{prompt}}'`, /in the URL; the http target puts the prompt in the body only/],
    [`wget https://h/x`, /not a curl command/],
    [`curl -H 'a: b'`, /no URL/],
    [`curl https://h/x -u alice`, /without a password/],
    [`curl https://h/x -X`, /-X needs a value/],
    [`curl "https://h/\${KEY:-none}"`, /Only plain \$\{NAME\}/],
  ];
  for (const [command, message] of refusals) {
    it(`refuses ${command.slice(0, 60)}`, () => {
      assert.throws(() => readCurl(command), (e: unknown) => e instanceof CurlError && message.test(e.message));
    });
  }

  it('never quotes a value from the command in its message', () => {
    const secret = 'sk-live-Zq81';
    for (const command of [`curl https://h/x -H 'Bearer ${secret}'`, `curl 'ftp://${secret}@h/x'`]) {
      assert.throws(() => readCurl(command), (e: unknown) => e instanceof CurlError && !e.message.includes(secret) && /Header 1|not a valid/.test(e.message));
    }
  });
});

describe('the curl reader in the extension', () => {
  it('is out of what activation loads: dist/curlRequest.js, required by Select Target on first use, and in the VSIX', () => {
    const root = join(__dirname, '..', '..', '..');
    const extension = readFileSync(join(root, 'dist', 'extension.js'), 'utf8');
    assert.ok(extension.includes('"./curlRequest.js"'), 'the extension requires it from beside itself');
    assert.ok(!extension.includes('is not one this reader knows'), 'the reader (its messages) is not in the extension bundle');
    assert.ok(readFileSync(join(root, 'dist', 'curlRequest.js'), 'utf8').includes('is not one this reader knows'));
    assert.ok(readFileSync(join(root, '.vscodeignore'), 'utf8').includes('!dist/curlRequest.js'), 'and the VSIX carries it');
    // The import's questions too: dist/curlPick.js, handed the reader (it bundles neither the reader nor the core).
    assert.ok(extension.includes('"./curlPick.js"') && !extension.includes('Where the values of this request go'));
    const pick = readFileSync(join(root, 'dist', 'curlPick.js'), 'utf8');
    assert.ok(pick.includes('Where the values of this request go') && !pick.includes('is not one this reader knows') && pick.length < 20_000, `dist/curlPick.js is ${pick.length} bytes`);
    assert.ok(readFileSync(join(root, '.vscodeignore'), 'utf8').includes('!dist/curlPick.js'), 'and the VSIX carries it');
  });
});

describe('the Batch API run path in the extension', () => {
  it('is out of what activation loads: dist/batchRun.js, required when a batch run starts, and in the VSIX', () => {
    const root = join(__dirname, '..', '..', '..');
    const extension = readFileSync(join(root, 'dist', 'extension.js'), 'utf8');
    assert.ok(extension.includes('"./batchRun.js"'), 'the extension requires it from beside itself');
    assert.ok(!extension.includes('Stopped following'), 'the run path (its messages) is not in the extension bundle');
    assert.ok(readFileSync(join(root, 'dist', 'batchRun.js'), 'utf8').includes('Stopped following'));
    assert.ok(readFileSync(join(root, '.vscodeignore'), 'utf8').includes('!dist/batchRun.js'), 'and the VSIX carries it');
  });
});
