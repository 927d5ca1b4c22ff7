// What a sandbox can be asked to be (the CLI's `sandbox` flags, the tests' fault hooks) and what it counts.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface SandboxOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When `port` is in use, listen on a free one instead of failing (the editor's sandbox prefers its last port). */
  anyPortIfTaken?: boolean;
  token?: string;
  benchmarkTraces?: number;
  robustnessTraces?: number;
  /** Prompts padded with context to about this many bytes (0: as seeded). */
  promptBytes?: number;
  /** Robustness prompts become listable this long after start. */
  generationSeconds?: number;
  /** The simulated evaluator's delay between an answer and Evaluated. */
  evaluationSeconds?: number;
  /** Added before every API answer. */
  latencyMs?: number;
  /** This fraction of API requests is answered 503. */
  failRate?: number;
  /** Largest accepted request body; larger ones get 413. */
  maxBodyBytes?: number;
  /** Latency of the sandbox's echo model at /v1/chat/completions. */
  modelLatencyMs?: number;
  /**
   * What a successful submit puts in `data`, where the spec shows a success text: another implementation of
   * the service may send null, an object or nothing (`--submit-data`).
   */
  submitData?: SubmitDataConvention;
  /**
   * A second submission for a trace is refused with 409 Conflict instead of replacing the first: a service that
   * keeps the first answer (the spec leaves repeats open).
   */
  rejectRepeats?: boolean;
  /**
   * A benchmark evaluation of this id whose prompt list is made up as it is sent (generatedPrompt), never built
   * whole: a list of 600,000 prompts without the sandbox holding 600 MB. It lists only; submissions get 404.
   */
  generatedList?: { evaluationId: number; traces: number; promptBytes: number };
  /** Business errors (a wrong token, an unknown trace…) as HTTP 200 with success: false (`--errors-as-200`). */
  errorsAs200?: boolean;
  /** How long a Batch API batch takes from its creation to completed (default 2,000 ms). */
  batchDelayMs?: number;
  /** Test hooks of the Batch API: a request's line in the error file instead of its answer; a batch that expires. */
  batchFaults?: {
    /**
     * An error-file line instead of the answer to this prompt in batch number `batch` (1-based): an HTTP status and
     * message, or a request-level error (no response) with its code and message.
     */
    line?: (prompt: string, batch: number) => { status: number; message: string } | { code: string; message: string } | undefined;
    /** Batch number `batch` expires after answering this many of its requests (undefined: it completes). */
    expire?: (batch: number) => number | undefined;
  };
  /**
   * Test hook: sees every request first and may answer it itself (return true). Lets tests inject faults
   * into a faithful service without a second implementation.
   */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
}

export const SUBMIT_DATA_CONVENTIONS = ['text', 'null', 'object', 'absent'] as const;
export type SubmitDataConvention = (typeof SUBMIT_DATA_CONVENTIONS)[number];

export interface SandboxStats {
  /** Requests per "METHOD path" (query excluded). */
  requests: Map<string, number>;
  /** Accepted submissions in all, repeats included. */
  submissions: number;
  /** Calls of the echo model, in all and per prompt. */
  modelCalls: number;
  modelCallsByPrompt: Map<string, number>;
}

