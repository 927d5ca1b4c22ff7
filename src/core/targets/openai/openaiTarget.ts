import { readUsage, TargetError } from '../target';
import type { Target, TargetCallOptions } from '../target';
import { STREAMED, StreamedAnswer, createTargetAgent, pickPath, targetProxy, targetRequest } from '../targetHttp';
import { proxyFor } from '../../../api/proxy';
import type { ProxyConfig } from '../../../api/proxy';
import { targetSecrets } from '../targetSecrets';

export interface OpenAiTargetOptions {
  /** e.g. https://api.openai.com/v1 or http://localhost:11434/v1 */
  baseUrl: string;
  model: string;
  /** The key itself, read by the caller from an environment variable; never logged. */
  apiKey: string | undefined;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  headers?: Record<string, string>;
  connections?: number;
  /** undefined: the environment's proxy; null: none. */
  proxy?: ProxyConfig | null;
  /** Said with a 401 or 403: how to give this endpoint its key (the front end knows its own words). */
  authHint?: string;
  /** Ask for the answer as server-sent events (stream: true): the time to first token is measured. */
  stream?: boolean;
}

/** The one endpoint the conventional OPENAI_API_KEY variable is meant for. */
export const OPENAI_API_ORIGIN = 'https://api.openai.com';

/** Any OpenAI-compatible chat-completions endpoint (OpenAI, Azure-compatible proxies, vLLM, Ollama, LM Studio...). */
export function createOpenAiTarget(options: OpenAiTargetOptions): Target {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const proxy = targetProxy(options.proxy);
  const agent = createTargetAgent(options.connections ?? 64, proxy);
  const headers = openAiHeaders(options);
  const what = `The model endpoint ${new URL(url).origin}`;
  const secrets = targetSecrets(headers, url);
  const via = proxyFor(proxy, new URL(url));
  const authHint = options.authHint;
  return {
    description: `openai ${options.model} at ${new URL(url).origin}`,
    async send(prompt, call) {
      const body = JSON.stringify({
        ...chatBody(options, prompt),
        ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      });
      const request = { method: 'POST', url, headers: options.stream ? { ...headers, accept: 'text/event-stream' } : headers, body, secrets, ...(authHint ? { authHint } : {}), ...(via ? { via } : {}) };
      if (options.stream) {
        const streamed = new StreamedAnswer(
          call,
          (e) => pickPath(e, 'choices.0.delta.content') ?? pickPath(e, 'choices.0.delta.refusal'),
          (e) => pickPath(e, 'usage'),
        );
        const json = await targetRequest(agent, request, what, call, streamed.onEvent);
        if (json === STREAMED) {
          const usage = readUsage(streamed.usage);
          if (usage) call.onUsage?.(usage);
          if (streamed.events === 0) throw new TargetError(`${what} sent an event stream without a single event`, 'failed', { retryable: true, cause: 'empty stream' });
          return streamed.text;
        }
        return answerOf(json, call, what);
      }
      const json = await targetRequest(agent, request, what, call);
      return answerOf(json, call, what);
    },
    close: () => agent.close(),
  };
}

/** The live call's headers (the key, the user's own): the Batch API's calls send the same. */
export function openAiHeaders(options: Pick<OpenAiTargetOptions, 'apiKey' | 'headers'>): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  return headers;
}

/** A chat completion's request body for one prompt: the live call's, and each line of a Batch API file. */
export function chatBody(options: Pick<OpenAiTargetOptions, 'model' | 'systemPrompt' | 'temperature' | 'maxTokens'>, prompt: string): Record<string, unknown> {
  const messages = [...(options.systemPrompt ? [{ role: 'system', content: options.systemPrompt }] : []), { role: 'user', content: prompt }];
  return {
    model: options.model,
    messages,
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
  };
}

/** The answer of a whole (not streamed) chat completion, and its usage. */
export function answerOf(json: unknown, call: TargetCallOptions, what: string): string {
  const usage = readUsage(pickPath(json, 'usage'));
  if (usage) call.onUsage?.(usage);
  const message = pickPath(json, 'choices.0.message') as { content?: unknown; refusal?: unknown } | undefined;
  if (typeof message?.content === 'string') return message.content;
  // A model's refusal is its answer (robustness evaluations want exactly that).
  if (typeof message?.refusal === 'string') return message.refusal;
  throw new TargetError(`${what} answered without choices[0].message.content`, 'failed', { retryable: false, cause: 'no answer' });
}
