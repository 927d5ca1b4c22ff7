// Steering the run of a journal from outside it (`eval-runner pause`, `resume`, `set --concurrency`): one request over
// runnerConnection's checked connection. Whoever started the run: the editor's runner or a CLI run, both listen the same way.
import type * as Connection from './runnerConnection';
import type * as Protocol from './runnerProtocol';
import type { SteerResult } from './runnerTypes';

export { RunReachError as SteerError } from './runnerFiles';

export type Steer = { action: 'pause' } | { action: 'resume' } | { action: 'setConcurrency'; concurrency: number };

/** Steers the run of this journal; resolves with the run's acknowledgement (where its steering stands now). */
export function steerRun(journalFile: string, steer: Steer, timeoutMs?: number): Promise<SteerResult> {
  // The connection and the JSON-RPC library under it are loaded here, by the commands that steer, not at the start
  // of every CLI command.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { reachRun } = require('./runnerConnection') as typeof Connection;
  const { pause, resume, setConcurrency } = require('./runnerProtocol') as typeof Protocol;
  /* eslint-enable @typescript-eslint/no-require-imports */
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
