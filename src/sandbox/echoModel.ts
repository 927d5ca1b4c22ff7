import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { delay, readBody } from './httpIo';
import type { Reply } from './httpIo';

export interface ModelStats {
  modelCalls: number;
  modelCallsByPrompt: Map<string, number>;
}

/**
 * The sandbox's OpenAI-compatible echo model at /v1/chat/completions: answers with the last user message, after
 * `latencyMs`, streamed when asked; counts its calls in `stats`.
 */
export async function answerEcho(req: IncomingMessage, res: ServerResponse, stats: ModelStats, latencyMs: number, maxBodyBytes: number): Promise<Reply | undefined> {
  const body = await readBody(req, maxBodyBytes);
  if (body === 'tooLarge') return { status: 413, body: { error: { message: 'too large' } } };
  let prompt = '';
  let stream = false;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { messages?: Array<{ role?: string; content?: unknown }>; stream?: unknown };
    const last = [...(parsed.messages ?? [])].reverse().find((m) => m.role === 'user');
    prompt = typeof last?.content === 'string' ? last.content : '';
    stream = parsed.stream === true;
  } catch {
    return { status: 400, body: { error: { message: 'The body must be JSON.' } } };
  }
  stats.modelCalls++;
  stats.modelCallsByPrompt.set(prompt, (stats.modelCallsByPrompt.get(prompt) ?? 0) + 1);
  if (stream) {
    await streamEcho(res, prompt, latencyMs);
    return undefined;
  }
  if (latencyMs) await delay(latencyMs);
  return { status: 200, body: echoCompletion(prompt) };
}

/** The echo model's chat completion for a prompt: the live answer's body, and each line's of a batch's output. */
export function echoCompletion(prompt: string): unknown {
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    model: 'sandbox-echo',
    choices: [{ index: 0, message: { role: 'assistant', content: prompt }, finish_reason: 'stop' }],
    // Tokens as a real endpoint reports them; here one per word, so tests can check the sums.
    usage: { prompt_tokens: wordCount(prompt), completion_tokens: wordCount(prompt), total_tokens: 2 * wordCount(prompt) },
  };
}

/** The last user message of a chat request's body ('' when there is none). */
export function lastUserMessage(body: unknown): string {
  const messages = (body as { messages?: Array<{ role?: string; content?: unknown }> } | null)?.messages;
  const last = Array.isArray(messages) ? [...messages].reverse().find((m) => m?.role === 'user') : undefined;
  return typeof last?.content === 'string' ? last.content : '';
}

/**
 * The echo model's answer as OpenAI streams it (stream: true): server-sent events of a few characters each,
 * the first after the model's latency, a last one with the usage, then [DONE].
 */
async function streamEcho(res: ServerResponse, prompt: string, latencyMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const id = `chatcmpl-${randomUUID()}`;
  const event = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
  if (latencyMs) await delay(latencyMs);
  const chars = [...prompt];
  const size = Math.max(1, Math.ceil(chars.length / 8));
  for (let i = 0; i < chars.length; i += size) {
    event({ id, object: 'chat.completion.chunk', model: 'sandbox-echo', choices: [{ index: 0, delta: { content: chars.slice(i, i + size).join('') }, finish_reason: null }] });
    if (latencyMs) await delay(Math.min(20, latencyMs / 10));
  }
  event({ id, object: 'chat.completion.chunk', model: 'sandbox-echo', choices: [], usage: { prompt_tokens: wordCount(prompt), completion_tokens: wordCount(prompt), total_tokens: 2 * wordCount(prompt) } });
  res.end('data: [DONE]\n\n');
}

/** The sandbox model's token count: one per whitespace-separated word. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
