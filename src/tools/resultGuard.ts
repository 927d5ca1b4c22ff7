// What every tool's answer passes before it leaves a host (callTool): the host's secrets redacted from its text and
// every string of its data (a model's answer can echo the key its request carried), and its size bounded (a service's
// ids or a target's texts must not make an answer without limit).
import { redactSecrets, safeText } from '../core';
import { ToolError } from './toolKit';
import type { ToolResult } from './toolKit';

/**
 * The bytes of one answer (text plus structured data) at most. The MCP SDK's client drops a server whose line passes
 * 10 MiB; an agent's context is far smaller still. A page over it comes back shorter, with its nextOffset.
 */
export const RESULT_BUDGET_BYTES = 1_000_000;

/** Clears a text of the secrets: each as held, as safeText shows it and as JSON quotes it (the tools write all three). */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const forms = [...new Set(secrets.flatMap((s) => [s, safeText(s), JSON.stringify(s).slice(1, -1)]).filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  return forms.length ? (text) => redactSecrets(text, forms) : (text) => text;
}

/** The answer redacted and within the budget: its page made smaller while it is over, else a tool error saying what to ask. */
export function guarded(answer: ToolResult, clean: (text: string) => string): ToolResult {
  for (let current = answer; ; ) {
    const json = JSON.stringify(current.structured, (_key, v: unknown) => (typeof v === 'string' ? clean(v) : v));
    const text = clean(current.text);
    const bytes = Buffer.byteLength(text) + Buffer.byteLength(json);
    if (bytes <= RESULT_BUDGET_BYTES) return { text, structured: JSON.parse(json) as Record<string, unknown> };
    if (!current.smaller) {
      throw new ToolError(`This answer would be ${(bytes / 1e6).toFixed(1)} MB, over the ${RESULT_BUDGET_BYTES / 1e6} MB a tool returns: ask for less (a smaller maxChars or limit).`);
    }
    current = current.smaller();
  }
}
