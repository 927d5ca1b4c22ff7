import { z } from 'zod';

/** The envelope every operation answers with. Lenient where the spec shows nothing (error bodies). */
export const envelopeSchema = z.object({
  code: z.string().optional(),
  message: z.string().nullable().optional(),
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
export function describeIssue(error: z.ZodError, itemLabel = 'item'): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid value';
  const path = issue.path.map((p) => (typeof p === 'number' ? `${itemLabel} ${p}` : String(p))).join(': ');
  return path ? `${path}: ${issue.message}` : issue.message;
}
