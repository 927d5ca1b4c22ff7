import { readUsage, TargetError } from '../target';
import type { Target } from '../target';
import { STREAMED, StreamedAnswer, createTargetAgent, targetProxy, targetRequest } from '../targetHttp';
import { compilePath } from './jsonPath';
import { proxyFor } from '../../../api/proxy';
import type { ProxyConfig } from '../../../api/proxy';
import { targetSecrets } from '../targetSecrets';
import { sentUrl } from './querySecrets';

export interface HttpTargetOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** Secret query parameters' values: added to the URL here, as requests are sent, and redacted from what comes back. */
  query?: Record<string, string>;
  /** JSON text in which every {{prompt}} is replaced by the prompt, JSON-escaped. */
  bodyTemplate?: string;
  /** Where the answer sits in the JSON response, e.g. choices.0.message.content. */
  answerPath: string;
  /** Where the token usage sits, e.g. usage: an object with prompt_tokens/completion_tokens (or input_/output_tokens). */
  usagePath?: string;
  /**
   * The endpoint streams server-sent events: the path to each event's piece of the answer (e.g.
   * choices.0.delta.content); the answer is their concatenation, the usage read from the last event with one.
   */
  ssePath?: string;
  connections?: number;
  /** undefined: the environment's proxy; null: none. */
  proxy?: ProxyConfig | null;
}

export const DEFAULT_BODY_TEMPLATE = '{"prompt": "{{prompt}}"}';

/** A user-defined JSON endpoint: the prompt goes into a body template, the answer comes out of a path. */
export function createHttpTarget(options: HttpTargetOptions): Target {
  const template = options.bodyTemplate ?? DEFAULT_BODY_TEMPLATE;
  // Checked once, here: an invalid JSONPath is a configuration error before any prompt is sent.
  const answerPath = compilePath(options.answerPath);
  const usagePath = options.usagePath ? compilePath(options.usagePath) : undefined;
  const ssePath = options.ssePath ? compilePath(options.ssePath) : undefined;
  if (!template.includes('{{prompt}}')) throw new TypeError('The body template must contain {{prompt}}.');
  const method = (options.method ?? 'POST').toUpperCase();
  const proxy = targetProxy(options.proxy);
  const agent = createTargetAgent(options.connections ?? 64, proxy);
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  const origin = new URL(options.url).origin;
  const what = `The HTTP target ${origin}`;
  const url = sentUrl(options.url, options.query);
  const secrets = targetSecrets(headers, url);
  const via = proxyFor(proxy, new URL(options.url));
  return {
    description: `http ${method} ${origin}`,
    async send(prompt, call) {
      // JSON.stringify escapes quotes, backslashes and control characters; the outer quotes come from the template.
      const escaped = JSON.stringify(prompt).slice(1, -1);
      const body = method === 'GET' || method === 'HEAD' ? undefined : template.split('{{prompt}}').join(escaped);
      const request = { method, url, headers, body, secrets, ...(via ? { via } : {}) };
      if (ssePath) {
        const streamed = new StreamedAnswer(call, (e) => ssePath.pick(e, what), (e) => usagePath?.pick(e, what));
        const result = await targetRequest(agent, { ...request, headers: { ...headers, accept: 'text/event-stream' } }, what, call, streamed.onEvent);
        if (result !== STREAMED) throw new TargetError(`${what} did not answer with an event stream (text/event-stream), which --sse-path expects`, 'failed', { retryable: false, cause: 'not an event stream' });
        const usage = readUsage(streamed.usage);
        if (usage) call.onUsage?.(usage);
        if (streamed.events === 0) throw new TargetError(`${what} sent an event stream without a single event`, 'failed', { retryable: true, cause: 'empty stream' });
        return streamed.text;
      }
      const json = await targetRequest(agent, request, what, call);
      const usage = usagePath ? readUsage(usagePath.pick(json, what)) : undefined;
      if (usage) call.onUsage?.(usage);
      const answer = answerPath.pick(json, what);
      if (typeof answer === 'string') return answer;
      if (answer === undefined || answer === null) {
        throw new TargetError(`${what} answered without a value at "${answerPath.expression}"`, 'failed', { retryable: false, cause: 'no answer' });
      }
      return JSON.stringify(answer);
    },
    close: () => agent.close(),
  };
}
