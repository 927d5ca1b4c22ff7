// zod/mini: the same validator core without the chained API and locales (12 KB in the bundle instead of 90 KB;
// the full entry's `z` export kept all of zod: 440 KB). Messages come from describeIssue, not from a locale.
import * as z from 'zod/mini';

/**
 * The envelope every operation answers with. Only `success` is held to the spec (client rule 4: it says whether
 * the call succeeded); the rest is lenient, since another implementation of the service may omit `message`,
 * send a `code` that is not `req_…` or a number, or add fields of its own. Those are read where they are text.
 */
export const envelopeSchema = z.object({
  code: z.optional(z.unknown()),
  message: z.optional(z.unknown()),
  data: z.optional(z.unknown()),
  success: z.boolean(),
});

/** The envelope as the client passes it on: the service's words as text (redacted), or absent. */
export interface Envelope {
  code: string | undefined;
  message: string | null;
  data: unknown;
  success: boolean;
}

/** A service's code or message as text: strings as they are, numbers written out, anything else absent. */
export function envelopeText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Extra fields on a prompt item are ignored (stripped), never an error. */
export const promptItemSchema = z.object({
  traceId: z.string(),
  content: z.string(),
});
export type PromptItem = z.infer<typeof promptItemSchema>;

export const promptListSchema = z.array(promptItemSchema);

/** What a submit's `data` was when it was not the success text: said in the log, never a failure. */
export function describeData(data: unknown): string {
  if (data === undefined) return 'absent';
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'an array';
  return typeof data === 'object' ? 'an object' : `a ${typeof data}`;
}

/** Turns the first zod issue into a short phrase such as `item 17: traceId: expected string`. */
export function describeIssue(error: z.core.$ZodError, itemLabel = 'item'): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid value';
  const path = issue.path.map((p) => (typeof p === 'number' ? `${itemLabel} ${p}` : String(p))).join(': ');
  const what = issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.code.replace(/_/g, ' ');
  return path ? `${path}: ${what}` : what;
}
