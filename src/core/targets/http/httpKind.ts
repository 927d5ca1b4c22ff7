import { DEFAULT_BODY_TEMPLATE, createHttpTarget } from './httpTarget';
import { plainHttpWarning } from '../targetSecrets';
import { endpoint } from '../kinds/endpoint';
import { defineKind } from '../kinds/kind';
import { QUERY_FLAGS, QUERY_KEYS, checkSecretQuery, namedUrl, readQueryFlags, writeQueryFlags } from './querySecrets';
import { HEADER_FLAGS, HEADER_KEYS, readHeaderFlags, writeHeaderFlags } from '../kinds/secretSources';

export const httpKind = defineKind({
  type: 'http',
  summary: 'your own JSON endpoint',
  picks: [
    { id: 'http', label: 'HTTP endpoint', description: 'your JSON API with a body template' },
    { id: 'curl', label: 'HTTP request from curl…', description: 'paste a request from DevTools, Postman or API docs' },
  ],
  keys: [
    { name: 'url', type: 'string', required: true, url: true, flag: 'http-url', arg: 'URL', description: 'the URL that receives the JSON body (required, or --from-curl on the command line)' },
    { name: 'method', type: 'string', flag: 'http-method', arg: 'M', description: 'the HTTP method (default POST)' },
    { name: 'bodyTemplate', type: 'string', flag: 'body-template', arg: 'JSON', description: `the JSON body; {{prompt}} is replaced, JSON-escaped (default ${DEFAULT_BODY_TEMPLATE})` },
    {
      name: 'answerPath',
      type: 'string',
      required: true,
      flag: 'answer-path',
      arg: 'PATH',
      description: `where the answer is in the JSON response, e.g. choices.0.message.content, or RFC 9535 JSONPath such as "$.output[0].content[?@.type=='text'].text"`,
    },
    { name: 'usagePath', type: 'string', flag: 'usage-path', arg: 'PATH', description: 'where the token usage is, e.g. usage (prompt_tokens, completion_tokens)' },
    {
      name: 'ssePath',
      type: 'string',
      flag: 'sse-path',
      arg: 'PATH',
      description: "the endpoint streams server-sent events: where each event's piece is, e.g. choices.0.delta.content (the answer is their concatenation; [DONE] ends it)",
    },
    ...HEADER_KEYS,
    ...QUERY_KEYS,
  ],
  flags: [
    {
      flag: 'from-curl',
      arg: 'FILE',
      description:
        'the request as a curl command (bash or cmd, as DevTools, Postman or API docs write it; - reads stdin) instead of --http-url, --http-method, --body-template: ' +
        '{{prompt}} marks where the prompt goes; $NAME and ${NAME} (%NAME% in cmd) are read from the environment, in headers and the URL\'s query only',
    },
    { flag: 'prompt-path', arg: 'PATH', description: "with --from-curl and no {{prompt}}: the body's string field that takes the prompt, e.g. '$.messages[0].content'" },
    ...HEADER_FLAGS,
    ...QUERY_FLAGS,
  ],
  readFlags(values, into) {
    readHeaderFlags(values, into);
    readQueryFlags(values, into);
  },
  writeFlags(config, out) {
    writeHeaderFlags(config, out);
    writeQueryFlags(config, out);
  },
  secrets: { headers: true },
  endpoint: (spec) => spec.url,
  identity(spec) {
    const method = (spec.method ?? 'POST').toUpperCase();
    // The secret parameters by name, as a URL that carried them showed before they moved out of it.
    const at = endpoint(namedUrl(spec.url, spec.secretQuery));
    return {
      description: `http: ${method} ${at}, answer at ${spec.ssePath ? `${spec.ssePath} (streamed)` : spec.answerPath}`,
      parts: [method, at, spec.bodyTemplate, spec.answerPath, ...(spec.ssePath ? [spec.ssePath] : [])],
      facts: { method, endpoint: at, 'body template': spec.bodyTemplate, 'answer path': spec.answerPath, 'stream path': spec.ssePath },
    };
  },
  create(spec, secrets, options) {
    checkSecretQuery(spec);
    const missing = (spec.secretQuery ?? []).filter((name) => secrets.query?.[name] === undefined);
    if (missing.length > 0) throw new TypeError(`The HTTP target's secret query parameter ${missing.join(', ')} has no value.`);
    return createHttpTarget({
      ...spec,
      ...(secrets.headers ? { headers: secrets.headers } : {}),
      ...(secrets.query ? { query: secrets.query } : {}),
      connections: options.connections,
      ...(options.proxy !== undefined ? { proxy: options.proxy } : {}),
    });
  },
  warnings(spec, secrets) {
    if (Object.keys(secrets.headers ?? {}).length === 0 && new URL(namedUrl(spec.url, spec.secretQuery)).search === '') return [];
    const warning = plainHttpWarning(spec.url, "The HTTP target's headers and query");
    return warning ? [warning] : [];
  },
});
