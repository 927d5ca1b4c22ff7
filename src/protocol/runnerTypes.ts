// What crosses the runner's socket, declared here as plain data, apart from the core's types (as a language server's
// protocol declares its own): a change in the core does not change the protocol unseen. test/unit/runnerProtocol.test.ts
// checks, at compile time and by value, that the core's types fit these and these build the core's options.
// Types only: nothing here is loaded at run time.

export interface EvaluationKeyParams {
  origin: string;
  kind: 'benchmark' | 'robustness';
  evaluationId: number;
}

export interface ProxyParams {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  /** A Proxy-Authorization header value: secret. */
  authorization?: string;
  strictSSL?: boolean;
}

/**
 * A target kind's spec as its descriptor in the core declares it (src/core/targets/kinds/): the protocol names only
 * its kind; the runner refuses a kind it does not know.
 */
export interface TargetSpecParams {
  type: string;
}

/** The target's secrets: they cross the socket in start only. */
export interface TargetSecretsParams {
  apiKey?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface TargetIdentityParams {
  description: string;
  fingerprint: string;
  facts: Record<string, string>;
  aliases?: string[];
}

/** Which traces a rerun runs again: those failed, marked bad or noted in the journal, or the ids given. */
export type RerunSubsetParams = 'failed' | 'bad' | 'noted' | { ids: readonly string[] };

/** The run's options as the window read them from its settings, and what this run is. */
export interface RunOptionsParams {
  concurrency: number;
  onTargetError: 'fail' | 'submit';
  waitForGenerationMs: number;
  servicePatienceMs: number;
  targetTimeoutMs: number;
  targetRetries?: number;
  maxRequestsPerMinute?: number;
  /** Stop when the target mostly fails (evalRunner.maxErrorRate): the share over the window, after minCalls. */
  maxErrorRate?: { rate: number; window: number; minCalls: number } | 'off';
  holdAnswers: boolean;
  mode: 'continue' | 'fresh' | 'reuse';
  /** Only these traces (Run Trace, Retry Failed): the window picked them. */
  only?: string[];
  reuseFetchedPrompts?: boolean;
  /** Rerun Traces: the runner picks these traces from the journal and reruns them as a new run (mode aside). */
  subset?: RerunSubsetParams;
  /** The tool and version recorded with the run. */
  tool: string;
}

/**
 * What the window's settings say of a run's cost: the runner prices the run (it holds the price list, the window
 * does not), applies the budget, and asks the window before a run whose estimate passes the threshold.
 */
export interface CostParams {
  /** evalRunner.prices as the user wrote it: checked by the runner (readPriceTable). */
  prices?: Record<string, unknown>;
  budgetUsd?: number;
  estimateThresholdUsd?: number;
}

/** A run's estimate passed the window's threshold: asked before any call. */
export interface ConfirmEstimateParams {
  /** The estimate in lines (traces, tokens, cost, assumptions: estimateText). */
  text: string;
  /** Its cost, as a range in USD. */
  usd: { low: number; high: number };
  thresholdUsd: number;
}

/** Everything a run needs; secrets (the token, a model key, header values) travel only in this message. */
export interface StartParams {
  key: EvaluationKeyParams;
  baseUrl: string;
  stateDir: string;
  label: string;
  token: string;
  encoding: 'urlencoded' | 'multipart';
  proxy: ProxyParams | null;
  userAgent: string;
  /** The guard against a runaway prompt list (evalRunner.maxListMegabytes), in bytes. */
  maxListBytes?: number;
  target: { spec: TargetSpecParams; secrets: TargetSecretsParams; cwd?: string; authHint?: string };
  identity: TargetIdentityParams;
  run: RunOptionsParams;
  cost?: CostParams;
  /** false: no window will give a new token (an agent's run): a refused token ends the run ("auth"), as the CLI's does. */
  askForToken?: boolean;
}

export interface StateCountsParams {
  pending: number;
  running: number;
  answered: number;
  submitted: number;
  failed: number;
  skipped: number;
}

export interface ProgressParams {
  phase: 'listing' | 'waiting' | 'running' | 'done';
  total: number;
  counts: StateCountsParams;
  ratePerSecond: number;
  etaSeconds: number | undefined;
  /** What this run set out to do and has finished of it: the ETA's measure. */
  thisRun?: { planned: number; finished: number };
  elapsedMs: number;
  targetConcurrency: number;
  lastError: string | undefined;
  waitingReason?: string;
  /** Paused (pause): calls in flight finish, none starts. */
  paused?: boolean;
  /** Submissions held: the service is down, or refused the token. */
  hold?: { kind: 'outage' | 'token'; since: number; cause: string; nextTryAt: number | undefined; waiting: number };
  /** The chat model's calls wait for a window to serve them. */
  waitingFor?: 'window';
  targetRateLimit?: number;
  serviceRateLimit?: number;
  batch?: {
    state: 'uploading' | 'validating' | 'in_progress' | 'finalizing' | 'cancelling' | 'completed' | 'failed' | 'expired' | 'cancelled';
    batches: number;
    completed: number;
    total: number;
    promptTokens: number;
    completionTokens: number;
    savedUsd?: number;
  };
  /** What the run has cost so far (its reported tokens at its journaled prices); usd null: no usage or no price. */
  cost?: { usd: number | null; inputTokens: number; outputTokens: number; cachedTokens: number; source: string | null; why?: string };
}

export type RunOutcomeParams = 'completed' | 'failedTraces' | 'cancelled' | 'auth' | 'unreachable' | 'notReady' | 'quota' | 'storage' | 'error' | 'budget';

interface HoldEventParams {
  kind: 'outage' | 'token';
  from: number;
  to: number;
  cause: string;
}

/** How a run ended (the core's summary, less its error object, which stays in the runner). */
export interface SummaryParams {
  outcome: RunOutcomeParams;
  message: string | undefined;
  total: number;
  counts: StateCountsParams;
  submittedNow: number;
  targetCalls: number;
  rateLimitedCalls: number;
  failed: Array<{ traceId: string; reason: string }>;
  durationMs: number;
  runningMs: number;
  runId: string | undefined;
  planned: { callTarget: number; wanted: number; submitFirst: number };
  listChanges?: { appeared: string[]; vanished: string[] };
  holds: HoldEventParams[];
  batch?: { batches: number; open: string[]; promptTokens: number; completionTokens: number; savedUsd?: number };
}

/**
 * A run that did not start: the journal's answers came from another target. The window says the message and asks
 * which way to go; what the conflict is made of (the earlier runs' records) stays in the runner.
 */
export interface RefusedParams {
  outcome: 'targetChanged';
  message: string;
}

/** How a run ended, as it crosses the socket. */
export type RunFinished = SummaryParams | RefusedParams;

export interface RunnerState {
  label: string;
  key: EvaluationKeyParams | undefined;
  progress: ProgressParams | undefined;
  finished: RunFinished | undefined;
}

/** Which traces Run Details shows (at most MAX_VIEW_IDS; more are left out), by id or (`rows`) by place in the run's list. */
export interface ViewParams {
  ids: string[];
  /** Since version 8: the traces from `start` to `end` of the run's list (the window does not know it): `ids` is ignored. */
  rows?: { start: number; end: number };
}

/** A trace as a row shows it: its texts as previews, never whole. */
export interface TraceFactsParams {
  traceId: string;
  state: StateParams;
  prompt: string | undefined;
  answer: string | undefined;
  latencyMs: number | undefined;
  error: string | undefined;
  rating: 'good' | 'bad' | undefined;
  note: string | undefined;
}

export type StateParams = keyof StateCountsParams;

/** The run's figures and charts as Run Details shows them. */
export interface RunFiguresParams {
  runId: string;
  target: string;
  stats: string;
  cost: string;
  charts: {
    histogram: { edges: number[]; counts: number[] };
    timeline: { startMs: number; binMs: number; answers: number[]; errors: number[]; limited: number[] };
  };
}

/** What the run going on says of itself for Run Details: so a window need not read its journal to show it. */
export interface RunViewParams {
  /** null: the run has no record yet (it is listing its prompts). */
  run: RunFiguresParams | null;
  /** The traces asked for that the run knows, in the order asked (by `rows`: the run's list from `start` on). */
  traces: TraceFactsParams[];
  /** Asked by `rows`: how many traces the run knows. */
  total?: number;
}

export interface HelloParams {
  version: number;
  /** The window's fresh nonce. */
  nonce: string;
}

export interface HelloResult {
  version: number;
  pid: number;
  nonce: string;
  /** The runner's proof over both nonces. */
  proof: string;
}

export interface CancelParams {
  /** Abort in-flight traces, rather than finish them. */
  hard: boolean;
  /** Cancel the run's open Batch API batches at the provider too (else they are only no longer followed). */
  abandonBatches?: boolean;
}

export interface SetConcurrencyParams {
  concurrency: number;
}

/** Where the run's steering stands once a pause, resume or setConcurrency took effect (and was journaled). */
export interface SteerResult {
  paused: boolean;
  /** Target calls in flight at most; undefined before the run calls the target (it keeps what it was given). */
  concurrency: number | undefined;
}

export interface LogParams {
  level: 'info' | 'warn' | 'error';
  message: string;
}

/**
 * One prompt to a chat model of the editor (the VS Code Language Model API exists only in a window). The runner's
 * cancel crosses as JSON-RPC cancellation; `timeoutMs` is the call's deadline, kept by the window.
 */
export interface LmSendParams {
  modelId?: string;
  prompt: string;
  timeoutMs: number;
}

export interface LmSendResult {
  text: string;
  usage?: { promptTokens?: number; completionTokens?: number };
}

/** How the chat model's call failed, as the target error it is in the window (a ResponseError's data, LM_ERROR_CODE). */
export interface LmSendError {
  kind: 'rateLimited' | 'timeout' | 'failed' | 'refused';
  message: string;
  retryable?: boolean;
  retryAfterMs?: number;
  /** Access to the model was refused: no later call can succeed, the run stops. */
  stopsRun?: boolean;
  /** Blocked: a quota or rate limit. */
  quota?: boolean;
}
