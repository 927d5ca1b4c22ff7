import { readUsage, TargetError } from './target';
import type { Target } from './target';
import { createTargetAgent, pickPath, targetProxy, targetRequest } from './targetHttp';
import { proxyFor } from '../../api/proxy';
import type { ProxyConfig } from '../../api/proxy';
import { targetSecrets } from './targetSecrets';

export interface HttpTargetOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** JSON text in which every {{prompt}} is replaced by the prompt, JSON-escaped. */
  bodyTemplate?: string;
  /** Where the answer sits in the JSON response, e.g. choices.0.message.content. */
  answerPath: string;
  /** Where the token usage sits, e.g. usage: an object with prompt_tokens/completion_tokens (or input_/output_tokens). */
  usagePath?: string;
  connections?: number;
  /** undefined: the environment's proxy; null: none. */
  proxy?: ProxyConfig | null;
}

export const DEFAULT_BODY_TEMPLATE = '{"prompt": "{{prompt}}"}';

/** A user-defined JSON endpoint: the prompt goes into a body template, the answer comes out of a path. */
export function createHttpTarget(options: HttpTargetOptions): Target {
  const template = options.bodyTemplate ?? DEFAULT_BODY_TEMPLATE;
  if (!template.includes('{{prompt}}')) throw new TypeError('The body template must contain {{prompt}}.');
  const method = (options.method ?? 'POST').toUpperCase();
  const proxy = targetProxy(options.proxy);
  const agent = createTargetAgent(options.connections ?? 64, proxy);
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  const origin = new URL(options.url).origin;
  const what = `The HTTP target ${origin}`;
  const secrets = targetSecrets(headers, options.url);
  const via = proxyFor(proxy, new URL(options.url));
  return {
    description: `http ${method} ${origin}`,
    async send(prompt, call) {
      // JSON.stringify escapes quotes, backslashes and control characters; the outer quotes come from the template.
      const escaped = JSON.stringify(prompt).slice(1, -1);
      const body = method === 'GET' || method === 'HEAD' ? undefined : template.split('{{prompt}}').join(escaped);
      const json = await targetRequest(agent, { method, url: options.url, headers, body, secrets, ...(via ? { via } : {}) }, what, call);
      const usage = options.usagePath ? readUsage(pickPath(json, options.usagePath)) : undefined;
      if (usage) call.onUsage?.(usage);
      const answer = pickPath(json, options.answerPath);
      if (typeof answer === 'string') return answer;
      if (answer === undefined || answer === null) {
        throw new TargetError(`${what} answered without a value at "${options.answerPath}"`, 'failed', { retryable: false, cause: 'no answer' });
      }
      return JSON.stringify(answer);
    },
    close: () => agent.close(),
  };
}
