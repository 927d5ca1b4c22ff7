// Hosting one run, whoever hosts it: the CLI in its own process, a runner process for a window. What the run is,
// how it runs or reruns and what it holds open is written once here; each host keeps only how it tells the run
// (the CLI's lines and exit code, the runner's notifications).
import type { ApiClient } from '../../api/client';
import type { EvaluationSession, RefusedRun, SessionRunOptions } from './session';
import type { BatchTarget } from '../targets/openai/openaiBatch';
import type { Target } from '../targets/target';
import type { RunSummary } from '../run/engine';
import type { RerunSubset } from '../run/rerun';
import { RunSteering } from '../run/runSteering';
import type { RunProgress } from '../run/runState';

/** One run to host: the session's run options, with the target made by the host run (so that it is closed). */
export interface HostRunRequest extends Omit<SessionRunOptions, 'target' | 'batch'> {
  /** Makes the target and the batch target; whatever it made is closed with the run, even when it throws. */
  targets: () => { target: Target; batch?: BatchTarget | undefined };
  /** Rerun these traces as a new run (the session picks them from the journal) rather than run the evaluation. */
  subset?: RerunSubset;
  /**
   * Listens for pause, resume and concurrency from outside while the run goes on (the CLI: on the runner protocol,
   * src/protocol/runListener.ts); told the run's progress and end, closed with it. A listener that cannot start
   * leaves the run unsteerable, not stopped.
   */
  listen?: (steering: RunSteering) => Promise<RunListening | undefined>;
}

/** A run's listener, as hostRun keeps it told. */
export interface RunListening {
  progress(p: RunProgress): void;
  finished(result: RunSummary | RefusedRun): void;
  close(): void;
}

/** What a rerun chose: the traces, the ids of a file the evaluation does not have, the run that answered them before. */
export interface RerunChoice {
  ids: string[];
  unknown: number;
  previousRun: string | undefined;
}

/** How the run ended (undefined: a rerun with no trace to run, nothing was done), and what a rerun chose. */
export interface HostedRun {
  result: RunSummary | RefusedRun | undefined;
  rerun?: RerunChoice;
  /** The run's batch target, for what the host does with it before it is closed (abandon its batches). */
  batch?: BatchTarget;
}

/**
 * Runs (or reruns) the request in the session; `finish` tells the outcome while the clients and the targets are
 * still open (a host may submit or cancel more), then the target, the batch target and every client the run used
 * (the first, and each one `newClient` gave for a new token) are closed, however the run ended. A run that throws
 * (the journal locked by another process, a target that cannot be made) throws here, after the closing.
 */
export async function hostRun<T>(session: EvaluationSession, request: HostRunRequest, finish: (ran: HostedRun) => Promise<T>): Promise<T> {
  const { targets, subset, newClient, listen, ...options } = request;
  const steering = options.steering ?? new RunSteering();
  const listening = listen ? await startListening(listen, steering, options.onLog) : undefined;
  const clients: ApiClient[] = [options.client];
  const kept = (client: ApiClient | undefined) => {
    if (client) clients.push(client);
    return client;
  };
  let made: ReturnType<HostRunRequest['targets']> | undefined;
  try {
    made = targets();
    const { target, batch } = made;
    const run: SessionRunOptions = {
      ...options,
      target,
      ...(batch ? { batch } : {}),
      ...(newClient ? { newClient: async (signal) => kept(await newClient(signal)) } : {}),
      steering,
      ...(listening ? { onProgress: (p: RunProgress) => told(p, options.onProgress, listening) } : {}),
    };
    const ran: HostedRun = subset ? await rerun(session, subset, run) : { result: await session.run(run) };
    if (ran.result) listening?.finished(ran.result);
    return await finish(batch ? { ...ran, batch } : ran);
  } finally {
    // Closing is best effort: the run's outcome stands whatever a target or a socket says on its way out.
    await made?.target.close?.().catch(() => undefined);
    await made?.batch?.close().catch(() => undefined);
    for (const client of clients) await client.close().catch(() => undefined);
    listening?.close();
  }
}

async function rerun(session: EvaluationSession, subset: RerunSubset, options: SessionRunOptions): Promise<HostedRun> {
  const { result, ...choice } = await session.rerun(subset, options);
  return { result, rerun: choice };
}

async function startListening(listen: NonNullable<HostRunRequest['listen']>, steering: RunSteering, onLog: HostRunRequest['onLog']): Promise<RunListening | undefined> {
  try {
    return await listen(steering);
  } catch (error) {
    onLog?.('warn', `This run cannot be paused or steered from outside: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

function told(p: RunProgress, onProgress: HostRunRequest['onProgress'], listening: RunListening): void {
  onProgress?.(p);
  listening.progress(p);
}
