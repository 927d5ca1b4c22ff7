import { createOpenAiTarget } from './openaiTarget';
import { plainHttpWarning } from '../targetSecrets';
import { defineKind } from '../kinds/kind';
import { API_KEY_ENV_KEY, HEADER_FLAGS, HEADER_KEYS, readHeaderFlags, writeHeaderFlags } from '../kinds/secretSources';
import { endpoint } from '../kinds/endpoint';

export const openaiKind = defineKind({
  type: 'openai',
  summary: 'an OpenAI-compatible chat-completions endpoint',
  picks: [
    { id: 'openai', label: 'OpenAI-compatible endpoint', description: 'OpenAI, vLLM, Ollama, LM Studio…' },
    { id: 'openai-batch', label: 'OpenAI Batch API', description: 'half the price, answers within 24 h; a stopped run takes its batches up' },
  ],
  keys: [
    { name: 'baseUrl', type: 'string', required: true, url: true, flag: 'openai-base-url', arg: 'URL', description: 'the base URL, e.g. https://api.openai.com/v1' },
    { name: 'model', type: 'string', required: true, flag: 'model', arg: 'NAME', description: 'the model name' },
    { name: 'systemPrompt', type: 'string', flag: 'system-prompt', arg: 'TEXT', description: 'a system message sent before each prompt' },
    { name: 'temperature', type: 'number', min: 0, max: 2, flag: 'temperature', arg: 'T', description: 'the sampling temperature' },
    { name: 'maxTokens', type: 'integer', min: 1, flag: 'max-tokens', arg: 'N', description: 'the most tokens an answer may have' },
    { name: 'stream', type: 'boolean', flag: 'stream', description: 'ask for the answer as server-sent events (stream: true); measures the time to first token' },
    { name: 'batch', type: 'boolean', flag: 'batch', description: 'through the Batch API: half the price, answers within 24 h; a stopped run takes up its batches on its next start' },
    {
      name: 'batchFallback',
      type: 'string',
      flag: 'batch-fallback',
      arg: 'batch|live',
      description: 'with batch: requests a batch failed for a passing reason (5xx, expired) go in a new batch (batch, the default) or as live calls (live)',
    },
    API_KEY_ENV_KEY,
    ...HEADER_KEYS,
  ],
  flags: HEADER_FLAGS,
  readFlags: readHeaderFlags,
  writeFlags: writeHeaderFlags,
  secrets: { apiKey: true, headers: true },
  endpoint: (spec) => spec.baseUrl,
  identity(spec) {
    const details = [
      spec.temperature !== undefined ? `temperature ${spec.temperature}` : undefined,
      spec.maxTokens !== undefined ? `max tokens ${spec.maxTokens}` : undefined,
      spec.systemPrompt ? 'system prompt' : undefined,
    ].filter(Boolean);
    const at = endpoint(spec.baseUrl);
    return {
      description: `openai: ${spec.model} @ ${at}${details.length ? `, ${details.join(', ')}` : ''}`,
      parts: [at, spec.model, spec.systemPrompt, spec.temperature, spec.maxTokens],
      facts: { endpoint: at, model: spec.model, 'system prompt': spec.systemPrompt, temperature: spec.temperature, 'max tokens': spec.maxTokens },
    };
  },
  create: (spec, secrets, options) =>
    createOpenAiTarget({
      ...spec,
      apiKey: secrets.apiKey,
      ...(secrets.headers ? { headers: secrets.headers } : {}),
      ...(options.authHint ? { authHint: options.authHint } : {}),
      connections: options.connections,
      ...(options.proxy !== undefined ? { proxy: options.proxy } : {}),
    }),
  warnings(spec, secrets) {
    const headers = Object.keys(secrets.headers ?? {}).length > 0;
    if (secrets.apiKey === undefined && !headers) return [];
    const warning = plainHttpWarning(spec.baseUrl, secrets.apiKey !== undefined ? 'The model key' : "The OpenAI target's headers");
    return warning ? [warning] : [];
  },
});
