// zod/mini: the same validator core without the chained API and locales (12 KB in the bundle instead of 90 KB;
// the full entry's `z` export kept all of zod: 440 KB). Messages come from describeIssue, not from a locale.
import * as z from 'zod/mini';

/** The envelope every operation answers with. Lenient where the spec shows nothing (error bodies). */
export const envelopeSchema = z.object({
  code: z.optional(z.string()),
  message: z.optional(z.nullable(z.string())),
  data: z.unknown(),
  success: z.boolean(),
});
export type Envelope = z.infer<typeof envelopeSchema>;

/** Extra fields on a prompt item are ignored (stripped), never an error. */
export const promptItemSchema = z.object({
  traceId: z.string(),
  content: z.string(),
});
export type PromptItem = z.infer<typeof promptItemSchema>;

export const promptListSchema = z.array(promptItemSchema);

export const submitDataSchema = z.string();

/** Turns the first zod issue into a short phrase such as `item 17: traceId: expected string`. */
export function describeIssue(error: z.core.$ZodError, itemLabel = 'item'): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid value';
  const path = issue.path.map((p) => (typeof p === 'number' ? `${itemLabel} ${p}` : String(p))).join(': ');
  const what = issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.code.replace(/_/g, ' ');
  return path ? `${path}: ${what}` : what;
}
