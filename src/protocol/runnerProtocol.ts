// The protocol between the editor and a runner process, declared once, apart from both (as a language server's
// extensions to LSP are): the runner (src/runner/) hosts the core and runs one evaluation; a window (src/extension/)
// starts it, attaches to it, and detaches from it on a reload while it goes on. JSON-RPC over a local socket (a
// named pipe on Windows), framed by vscode-jsonrpc. Its messages' types are its own (runnerTypes.ts); each message
// says who sends it (RUNNER_MESSAGES); docs/runner-protocol.md tells them, and a test keeps it in step.
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { CancelParams, ConfirmEstimateParams, HelloParams, HelloResult, LmSendError, LmSendParams, LmSendResult, LogParams, ProgressParams, RunFinished, RunnerState, RunViewParams, SetConcurrencyParams, StartParams, SteerResult, ViewParams } from './runnerTypes';

export { RUNNER_PROTOCOL_VERSION } from './runnerFiles';
export type { RunnerFile } from './runnerFiles';
export type * from './runnerTypes';

/**
 * The handshake (runnerHandshake.ts): each side proves it knows the runner file's secret, which never crosses the
 * socket. hello: the window's fresh nonce; the runner answers with its own and its proof over both.
 */
export const hello = new RequestType<HelloParams, HelloResult, void>('evalRunner/hello');
/** Sent only once the runner proved itself: the window's proof. Until the runner accepts it, it serves nothing. */
export const prove = new RequestType<{ proof: string }, void, void>('evalRunner/prove');
/** Starts the run (once per runner). */
export const start = new RequestType<StartParams, void, void>('evalRunner/start');
/** What the runner is doing now: for a window that attaches after a reload. */
export const state = new RequestType0<RunnerState, void>('evalRunner/state');
/**
 * What Run Details shows of the run: its figures and charts, and these traces' rows. A window showing the run asks it
 * once a second rather than reading the run's journal, which the runner has in memory.
 */
export const view = new RequestType<ViewParams, RunViewParams, void>('evalRunner/view');
/** Cancel: drain (finish in-flight traces) or hard (abort them). */
export const cancel = new RequestType<CancelParams, void, void>('evalRunner/cancel');
/** No new target call starts until resume; calls in flight finish, the run keeps its lock. Answered once in effect. */
export const pause = new RequestType0<SteerResult, void>('evalRunner/pause');
export const resume = new RequestType0<SteerResult, void>('evalRunner/resume');
/** Target calls in flight at most from now on (1–1024): lower, those in flight finish first. */
export const setConcurrency = new RequestType<SetConcurrencyParams, SteerResult, void>('evalRunner/setConcurrency');
/** A file was saved; a python target whose folder it is in restarts its workers before the next trace. */
export const saved = new NotificationType<{ path: string }>('evalRunner/saved');
export const progress = new NotificationType<ProgressParams>('evalRunner/progress');
export const log = new NotificationType<LogParams>('evalRunner/log');
export const finished = new NotificationType<RunFinished>('evalRunner/finished');
/** The service rejected the token; a new one (undefined: the user stopped the run). */
export const needToken = new RequestType0<{ token: string | undefined }, void>('evalRunner/needToken');
/** The run's estimate passed evalRunner.estimateThresholdUsd: go on (true) or end it before any call (false). */
export const confirmEstimate = new RequestType<ConfirmEstimateParams, { go: boolean }, void>('evalRunner/confirmEstimate');
/** The ResponseError code of a chat model's call that failed as a target error (any other error: the window failed). */
export const LM_ERROR_CODE = -32050;
/** One prompt to a chat model of the editor; it fails with LmSendError as a ResponseError's data. */
export const lmSend = new RequestType<LmSendParams, LmSendResult, LmSendError>('evalRunner/lmSend');

export type Direction = 'window → runner' | 'runner → window';

/** Every message and who sends it: the one list docs/runner-protocol.md is checked against. */
export const RUNNER_MESSAGES: ReadonlyArray<{ method: string; kind: 'request' | 'notification'; direction: Direction }> = [
  { method: hello.method, kind: 'request', direction: 'window → runner' },
  { method: prove.method, kind: 'request', direction: 'window → runner' },
  { method: start.method, kind: 'request', direction: 'window → runner' },
  { method: state.method, kind: 'request', direction: 'window → runner' },
  { method: view.method, kind: 'request', direction: 'window → runner' },
  { method: cancel.method, kind: 'request', direction: 'window → runner' },
  { method: pause.method, kind: 'request', direction: 'window → runner' },
  { method: resume.method, kind: 'request', direction: 'window → runner' },
  { method: setConcurrency.method, kind: 'request', direction: 'window → runner' },
  { method: saved.method, kind: 'notification', direction: 'window → runner' },
  { method: progress.method, kind: 'notification', direction: 'runner → window' },
  { method: log.method, kind: 'notification', direction: 'runner → window' },
  { method: finished.method, kind: 'notification', direction: 'runner → window' },
  { method: needToken.method, kind: 'request', direction: 'runner → window' },
  { method: lmSend.method, kind: 'request', direction: 'runner → window' },
  { method: confirmEstimate.method, kind: 'request', direction: 'runner → window' },
];
