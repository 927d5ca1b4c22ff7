// Steering the run of a journal from outside it (`eval-runner pause`, `resume`, `set --concurrency`): one request over
// runnerConnection's checked connection. Whoever started the run: the editor's runner or a CLI run, both listen the same way.
import { reachRun, REACH_TIMEOUT_MS } from './runnerConnection';
import { pause, resume, setConcurrency } from './runnerProtocol';
import type { SteerResult } from './runnerTypes';

export { RunReachError as SteerError } from './runnerConnection';

export type Steer = { action: 'pause' } | { action: 'resume' } | { action: 'setConcurrency'; concurrency: number };

/** Steers the run of this journal; resolves with the run's acknowledgement (where its steering stands now). */
export function steerRun(journalFile: string, steer: Steer, timeoutMs = REACH_TIMEOUT_MS): Promise<SteerResult> {
  return reachRun(
    journalFile,
    (connection) =>
      steer.action === 'pause'
        ? connection.sendRequest(pause)
        : steer.action === 'resume'
          ? connection.sendRequest(resume)
          : connection.sendRequest(setConcurrency, { concurrency: steer.concurrency }),
    timeoutMs,
  );
}
