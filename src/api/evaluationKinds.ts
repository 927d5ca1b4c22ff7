/** The two evaluation kinds share one loop; the kind alone decides paths and the answer field. */
export const EVALUATION_KINDS = ['benchmark', 'robustness'] as const;
export type EvaluationKind = (typeof EVALUATION_KINDS)[number];

export type AnswerField = 'llmResponse' | 'advResponse';

export interface KindRoute {
  readonly listPath: string;
  readonly submitPath: string;
  readonly answerField: AnswerField;
}

export const KIND_ROUTES: Readonly<Record<EvaluationKind, KindRoute>> = {
  benchmark: {
    listPath: '/api/evaluation/promptsAll',
    submitPath: '/api/evaluation/response',
    answerField: 'llmResponse',
  },
  robustness: {
    listPath: '/api/evaluation/all-adv-prompts',
    submitPath: '/api/evaluation/adv-response',
    answerField: 'advResponse',
  },
};

export function isEvaluationKind(value: unknown): value is EvaluationKind {
  return (EVALUATION_KINDS as readonly unknown[]).includes(value);
}

export function otherKind(kind: EvaluationKind): EvaluationKind {
  return kind === 'benchmark' ? 'robustness' : 'benchmark';
}

/** Evaluation ids are numbers on the wire; only safe non-negative integers survive the decimal round trip. */
export function isEvaluationId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export type RequestEncoding = 'urlencoded' | 'multipart';
