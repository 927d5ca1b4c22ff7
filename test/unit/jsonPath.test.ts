import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compilePath } from '../../src/core/targets/http/jsonPath';
import { createHttpTarget } from '../../src/core/targets/http/httpTarget';
import { TargetError } from '../../src/core/targets/target';
import { scriptedServer } from './helpers/servers';

const RESPONSE = {
  output: [
    {
      content: [
        { type: 'reasoning', text: 'thinking…' },
        { type: 'text', text: 'the answer' },
      ],
    },
  ],
  meta: { usage: { input_tokens: 7, output_tokens: 3 } },
  choices: [{ message: { content: 'dotted' } }],
};

describe('answer and usage paths: RFC 9535 JSONPath, the dotted form still', () => {
  it('selects through filters and keeps the dotted form', () => {
    assert.equal(compilePath("$.output[0].content[?@.type=='text'].text").pick(RESPONSE, 'x'), 'the answer');
    assert.equal(compilePath('$.choices[0].message.content').pick(RESPONSE, 'x'), 'dotted');
    assert.equal(compilePath('choices.0.message.content').pick(RESPONSE, 'x'), 'dotted');
    assert.equal(compilePath('$.nothing.here').pick(RESPONSE, 'x'), undefined);
  });

  it('an expression that selects several values, or is not JSONPath, is a clear error naming it', () => {
    assert.throws(() => compilePath('$.output[0].content[*].text').pick(RESPONSE, 'The HTTP target'), (e: unknown) =>
      e instanceof TargetError && /has 2 values at "\$\.output\[0\]\.content\[\*\]\.text"; the path must select exactly one/.test(e.message),
    );
    assert.throws(() => compilePath("$.a[?@.b=='"), /The JSONPath "\$\.a\[\?@\.b=='" is not valid RFC 9535 JSONPath/);
  });

  it('the http target answers through a JSONPath, with usage by JSONPath; one that selects nothing names the expression', async () => {
    const server = await scriptedServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(RESPONSE));
    });
    try {
      const call = () => ({ signal: new AbortController().signal, timeoutMs: 5000, onUsage: (u: object) => usages.push(u) });
      const usages: object[] = [];
      const good = createHttpTarget({ url: server.url, answerPath: "$.output[0].content[?@.type=='text'].text", usagePath: '$.meta.usage' });
      assert.equal(await good.send('q', call()), 'the answer');
      assert.deepEqual(usages, [{ promptTokens: 7, completionTokens: 3 }]);
      await good.close?.();
      const none = createHttpTarget({ url: server.url, answerPath: "$.output[0].content[?@.type=='image'].url" });
      await assert.rejects(none.send('q', call()), /answered without a value at "\$\.output\[0\]\.content\[\?@\.type=='image'\]\.url"/);
      await none.close?.();
    } finally {
      await server.close();
    }
  });

  it('keeps the JSONPath library out of what activation loads: dist/jsonpath.js, required on first use', () => {
    const root = join(__dirname, '..', '..', '..');
    const extension = readFileSync(join(root, 'dist', 'extension.js'), 'utf8');
    assert.ok(extension.includes('"./jsonpath.js"'), 'the extension requires it from beside itself');
    assert.ok(!extension.includes('end of input'), 'the parser (its messages) is not in the extension bundle');
    assert.ok(readFileSync(join(root, 'dist', 'jsonpath.js'), 'utf8').includes('end of input'));
    // Nor does the runner load it (or undici's HTTP/2 client) at each of the editor's runs, as the CLI does not.
    for (const bundle of ['runner.js', 'cli.js']) {
      const text = readFileSync(join(root, 'dist', bundle), 'utf8');
      assert.ok(text.includes('"./jsonpath.js"') && !text.includes('end of input'), `${bundle} requires JSONPath from beside itself`);
      assert.ok(!text.includes('require("node:http2")'), `${bundle} does not load node:http2`);
    }
    assert.ok(readFileSync(join(root, '.vscodeignore'), 'utf8').includes('!dist/jsonpath.js'), 'and the VSIX carries it');
  });
});
