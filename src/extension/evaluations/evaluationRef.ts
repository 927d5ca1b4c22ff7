// What the window knows of an evaluation it shows, without vscode: where its service is and which journal is its.
import { parseBaseUrl } from '../../api/client';
import type { EvaluationKind } from '../../api/evaluationKinds';
import { SANDBOX_ORIGIN, sessionId } from '../../core';
import type { JournalKey } from '../../core';

export interface EvaluationRef {
  /** Stable across reloads: the journal's key (origin, kind and id). */
  readonly id: string;
  readonly baseUrl: string;
  /** The service's origin: its token is stored under it. */
  readonly origin: string;
  readonly evaluationId: number;
  readonly kind: EvaluationKind;
  readonly label: string;
  readonly source: 'configured' | 'sandbox';
  /**
   * Which journal is the evaluation's: the service's origin, or for the local sandbox the sandbox itself, so a
   * sandbox on another port after a reload finds its runs, verdicts and comparisons.
   */
  readonly key: JournalKey;
}

export function makeRef(baseUrl: string, evaluationId: number, kind: EvaluationKind, label: string, source: EvaluationRef['source']): EvaluationRef {
  let origin = 'unset';
  try {
    // The API module's own check: a base URL it would refuse (e.g. a path with //) is invalid here too.
    origin = baseUrl ? parseBaseUrl(baseUrl).origin : 'unset';
  } catch {
    origin = 'invalid';
  }
  const key: JournalKey = { origin: source === 'sandbox' ? SANDBOX_ORIGIN : origin, kind, evaluationId };
  return { id: sessionId(key), baseUrl, origin, evaluationId, kind, label, source, key };
}
