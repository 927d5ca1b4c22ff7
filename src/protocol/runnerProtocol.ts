// The protocol between the editor and a runner process, declared once, apart from both (as a language server's
// extensions to LSP are): the runner (src/runner/) hosts the core and runs one evaluation; a window (src/extension/)
// starts it, attaches to it, and detaches from it on a reload while it goes on. JSON-RPC over a local socket (a
// named pipe on Windows), framed by vscode-jsonrpc.
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { ProxyConfig } from '../api/proxy';
import type { EvaluationKind, RequestEncoding } from '../api/kinds';
import type { RefusedRun, RunBasics, RunMode, RunProgress, RunSummary, TargetError, TargetIdentity, TargetSecrets, TargetSpec } from '../core';

export { RUNNER_PROTOCOL_VERSION } from './runnerFiles';
export type { RunnerFile } from './runnerFiles';

/** Everything a run needs; secrets (the token, a model key, header values) travel only in this message. */
export interface StartParams {
  key: { origin: string; kind: EvaluationKind; evaluationId: number };
  baseUrl: string;
  stateDir: string;
  label: string;
  token: string;
  encoding: RequestEncoding;
  proxy: ProxyConfig | null;
  userAgent: string;
  /** The guard against a runaway prompt list (evalRunner.maxListMegabytes), in bytes. */
  maxListBytes?: number;
  target: { spec: TargetSpec; secrets: TargetSecrets; cwd?: string; authHint?: string };
  identity: TargetIdentity;
  /** The run's options (the core's RunBasics, as the CLI's), and what this run is. */
  run: RunBasics & {
    mode: RunMode;
    only?: string[];
    rerun?: boolean;
    reuseFetchedPrompts?: boolean;
    tool: string;
  };
}

/** How a run ended, as it crosses the socket (the summary's error object stays in the runner). */
export type RunFinished = Omit<RunSummary, 'error'> | RefusedRun;

export interface RunnerState {
  label: string;
  key: StartParams['key'] | undefined;
  progress: RunProgress | undefined;
  finished: RunFinished | undefined;
}

/**
 * The handshake (runnerHandshake.ts): each side proves it knows the runner file's secret, which never crosses the
 * socket. hello: the window's fresh nonce; the runner answers with its own and its proof over both.
 */
export const hello = new RequestType<{ version: number; nonce: string }, { version: number; pid: number; nonce: string; proof: string }, void>('evalRunner/hello');
/** Sent only once the runner proved itself: the window's proof. Until the runner accepts it, it serves nothing. */
export const prove = new RequestType<{ proof: string }, void, void>('evalRunner/prove');
/** Starts the run (once per runner). */
export const start = new RequestType<StartParams, void, void>('evalRunner/start');
/** What the runner is doing now: for a window that attaches after a reload. */
export const state = new RequestType0<RunnerState, void>('evalRunner/state');
/** Cancel: drain (finish in-flight traces) or hard (abort them). */
/** abandonBatches: the run's open Batch API batches are cancelled at the provider too (else they are only no longer followed). */
export const cancel = new RequestType<{ hard: boolean; abandonBatches?: boolean }, void, void>('evalRunner/cancel');
export const progress = new NotificationType<RunProgress>('evalRunner/progress');
export const log = new NotificationType<{ level: 'info' | 'warn' | 'error'; message: string }>('evalRunner/log');
export const finished = new NotificationType<RunFinished>('evalRunner/finished');
/** Window → runner: a file was saved; a python target whose folder it is in restarts its workers before the next trace. */
export const saved = new NotificationType<{ path: string }>('evalRunner/saved');
/** Runner → window: the service rejected the token; a new one (undefined: the user stopped the run). */
export const needToken = new RequestType0<{ token: string | undefined }, void>('evalRunner/needToken');

/**
 * Runner → window: one prompt to a chat model of the editor (the VS Code Language Model API exists only in a window).
 * The runner's cancel crosses as JSON-RPC cancellation; `timeoutMs` is the call's deadline, kept by the window.
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
  kind: TargetError['kind'];
  message: string;
  retryable?: boolean;
  retryAfterMs?: number;
  /** Access to the model was refused: no later call can succeed, the run stops. */
  stopsRun?: boolean;
  /** Blocked: a quota or rate limit. */
  quota?: boolean;
}
/** The ResponseError code of a chat model's call that failed as a target error (any other error: the window failed). */
export const LM_ERROR_CODE = -32050;
export const lmSend = new RequestType<LmSendParams, LmSendResult, LmSendError>('evalRunner/lmSend');
