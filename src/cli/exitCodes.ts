/** The CLI's exit codes: a contract scripts and CI rely on. */
export const EXIT = {
  ok: 0,
  failedTraces: 1,
  usage: 2,
  auth: 3,
  unreachable: 4,
  /** The state folder could not be written (a full disk, a read-only or forbidden folder): nothing was lost. */
  storage: 5,
  /** The run's budget (--budget) is reached: answers so far are saved; a larger budget goes on. */
  budget: 6,
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A usage or configuration error: exit 2 with the message and a pointer to --help. */
export class UsageError extends Error {
  override name = 'UsageError';
}
