// The service's endpoints, declared: which request each operation sends (src/api/evaluationKinds.ts holds the two kinds'
// paths and answer field), and how its success envelope is read.
import { ApiError, redact, truncate } from './errors';
import { KIND_ROUTES, isEvaluationId } from './evaluationKinds';
import type { EvaluationKind } from './evaluationKinds';
import { describeData, describeIssue, promptListSchema } from './schemas';
import type { Envelope, PromptItem } from './schemas';
import type { RequestSpec } from './transport';

export interface SubmitResult {
  message: string;
  /** The service's success text; empty when its `data` was not a string (the answer is recorded all the same). */
  data: string;
  requestCode: string | undefined;
}

/** GET the kind's prompt list: `/api/evaluation/promptsAll` or `/api/evaluation/all-adv-prompts`. */
export function listRoute(kind: EvaluationKind, evaluationId: number, maxBytes: number): RequestSpec {
  checkId(evaluationId);
  return {
    method: 'GET',
    path: KIND_ROUTES[kind].listPath,
    query: { evaluationId: String(evaluationId) },
    operation: `listing the ${kind} prompts of evaluation ${evaluationId}`,
    maxBytes,
  };
}

/** POST one answer as a form: evaluationId, traceId, and llmResponse or advResponse. */
export function submitRoute(kind: EvaluationKind, evaluationId: number, traceId: string, answer: string, maxBytes: number): RequestSpec {
  checkId(evaluationId);
  const route = KIND_ROUTES[kind];
  return {
    method: 'POST',
    path: route.submitPath,
    form: [
      ['evaluationId', String(evaluationId)],
      ['traceId', traceId],
      [route.answerField, answer],
    ],
    operation: `submitting the answer to trace "${traceId}" of ${kind} evaluation ${evaluationId}`,
    maxBytes,
  };
}

/**
 * The prompt items of a list's envelope. The common case is checked by hand (100k items: 3 ms instead of 20); zod,
 * the schema of record, only runs when an item looks wrong, to say which and why.
 */
export function readPromptList(envelope: Envelope, operation: string): PromptItem[] {
  const fast = plainPromptItems(envelope.data);
  if (fast) return fast;
  const parsed = promptListSchema.safeParse(envelope.data);
  if (!parsed.success) {
    throw new ApiError(
      `The service's prompt list is malformed (${describeIssue(parsed.error)})`,
      'The service may have changed its format; report this with the request code.',
      { reason: 'format', operation, requestCode: envelope.code },
    );
  }
  return parsed.data;
}

/**
 * success: true is the spec's promise that the answer is recorded (client rule 4); the text in `data` is a courtesy.
 * A service that sends null, an object or nothing there has still recorded the answer.
 */
export function readSubmitResult(envelope: Envelope, traceId: string, token: string, onDebug: ((message: string) => void) | undefined): SubmitResult {
  if (typeof envelope.data !== 'string') {
    onDebug?.(`The service accepted trace "${truncate(traceId, 200)}" with data ${describeData(envelope.data)} instead of a success text; the answer is recorded.`);
  }
  const data = typeof envelope.data === 'string' ? truncate(redact(envelope.data, token), 2000) : '';
  return { message: envelope.message ?? '', data, requestCode: envelope.code };
}

function checkId(evaluationId: number): void {
  if (!isEvaluationId(evaluationId)) {
    throw new RangeError(`The evaluation id must be a non-negative whole number (got ${String(evaluationId)}).`);
  }
}

/** The prompt items, extra fields dropped, when every item is {traceId: string, content: string}; else undefined. */
export function plainPromptItems(data: unknown): PromptItem[] | undefined {
  if (!Array.isArray(data)) return undefined;
  const items = new Array<PromptItem>(data.length);
  for (let i = 0; i < data.length; i++) {
    const item = data[i] as { traceId?: unknown; content?: unknown } | null;
    if (item === null || typeof item !== 'object' || typeof item.traceId !== 'string' || typeof item.content !== 'string') return undefined;
    items[i] = { traceId: item.traceId, content: item.content };
  }
  return items;
}
