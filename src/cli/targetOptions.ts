import { createCommandTarget } from '../core/targets/commandTarget';
import { createEchoTarget } from '../core/targets/echoTarget';
import { createHttpTarget } from '../core/targets/httpTarget';
import { createOpenAiTarget } from '../core/targets/openaiTarget';
import type { Target } from '../core/targets/target';
import { choiceOption, intOption, numberOption } from './args';
import { UsageError } from './exitCodes';

export const TARGET_KINDS = ['echo', 'openai', 'http', 'command'] as const;

export const TARGET_OPTIONS = {
  target: { type: 'string' },
  'target-timeout': { type: 'string' },
  'openai-base-url': { type: 'string' },
  model: { type: 'string' },
  'system-prompt': { type: 'string' },
  temperature: { type: 'string' },
  'max-tokens': { type: 'string' },
  'api-key-env': { type: 'string' },
  header: { type: 'string', multiple: true },
  'http-url': { type: 'string' },
  'http-method': { type: 'string' },
  'body-template': { type: 'string' },
  'answer-path': { type: 'string' },
  command: { type: 'string' },
} as const;

export const TARGET_HELP = `Targets (--target):
  echo                        answers with the prompt itself
  openai                      an OpenAI-compatible chat-completions endpoint:
    --openai-base-url URL       e.g. https://api.openai.com/v1 (required)
    --model NAME                (required)
    --system-prompt TEXT, --temperature T, --max-tokens N
    --api-key-env NAME          environment variable holding the API key (default OPENAI_API_KEY)
  http                        your own JSON endpoint:
    --http-url URL              (required)   --http-method M (default POST)
    --body-template JSON        {{prompt}} is replaced, JSON-escaped (default {"prompt": "{{prompt}}"})
    --answer-path PATH          e.g. choices.0.message.content (required)
  command                     a shell command per prompt: prompt on stdin, answer on stdout
    --command CMD               (required)
  --header 'Name: value'      extra request header for openai/http (repeatable)
  --target-timeout SECONDS    per target call (default 600)`;

type TargetValues = { [K in keyof typeof TARGET_OPTIONS]?: (typeof TARGET_OPTIONS)[K] extends { multiple: true } ? string[] : string };

function headers(list: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of list ?? []) {
    const i = h.indexOf(':');
    if (i <= 0) throw new UsageError(`--header must look like 'Name: value' (got "${h}").`);
    out[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  return out;
}

function required(value: string | undefined, name: string, target: string): string {
  if (!value) throw new UsageError(`--${name} is required with --target ${target}.`);
  return value;
}

export function targetFromArgs(v: TargetValues, concurrency: number, env = process.env): { target: Target; timeoutMs: number } {
  const kind = choiceOption(v.target, 'target', TARGET_KINDS);
  const timeoutMs = intOption(v['target-timeout'], 'target-timeout', 600, 1, 86_400) * 1000;
  switch (kind) {
    case 'echo':
      return { target: createEchoTarget(), timeoutMs };
    case 'openai': {
      const keyEnv = v['api-key-env'] ?? 'OPENAI_API_KEY';
      return {
        target: createOpenAiTarget({
          baseUrl: required(v['openai-base-url'], 'openai-base-url', kind),
          model: required(v.model, 'model', kind),
          apiKey: env[keyEnv],
          ...(v['system-prompt'] ? { systemPrompt: v['system-prompt'] } : {}),
          ...(v.temperature !== undefined ? { temperature: numberOption(v.temperature, 'temperature', 1, 0, 2) } : {}),
          ...(v['max-tokens'] !== undefined ? { maxTokens: intOption(v['max-tokens'], 'max-tokens', 0, 1) } : {}),
          headers: headers(v.header),
          connections: concurrency,
        }),
        timeoutMs,
      };
    }
    case 'http':
      return {
        target: createHttpTarget({
          url: required(v['http-url'], 'http-url', kind),
          ...(v['http-method'] ? { method: v['http-method'] } : {}),
          ...(v['body-template'] ? { bodyTemplate: v['body-template'] } : {}),
          answerPath: required(v['answer-path'], 'answer-path', kind),
          headers: headers(v.header),
          connections: concurrency,
        }),
        timeoutMs,
      };
    case 'command':
      return { target: createCommandTarget({ command: required(v.command, 'command', kind) }), timeoutMs };
  }
}
