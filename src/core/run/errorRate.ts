// Stopping a run whose target mostly fails (--max-error-rate, evalRunner.maxErrorRate): a broken key, a wrong URL or a
// model that is down would otherwise be called for every trace of the evaluation, each failure only journaled.
import { errorGroup } from '../store/errorGroups';
import type { MaxErrorRate } from '../options/maxErrorRate';

export { DEFAULT_MAX_ERROR_RATE, parseMaxErrorRate } from '../options/maxErrorRate';
export type { MaxErrorRate } from '../options/maxErrorRate';

/**
 * The last `window` target calls, failed or not, and why the failed ones failed: `record` answers the words to halt
 * the run with once the share of failures passes the rate (after `minCalls` calls), else undefined. O(1) a call.
 */
export class ErrorRateGuard {
  private readonly outcomes: Array<string | undefined>;
  private calls = 0;
  private failures = 0;

  constructor(private readonly limit: MaxErrorRate) {
    this.outcomes = new Array<string | undefined>(Math.max(1, limit.window));
  }

  /** One target call ended: `failure` is its reason when it failed (after its retries), else undefined. */
  record(failure: string | undefined): string | undefined {
    const slot = this.calls % this.outcomes.length;
    if (this.calls >= this.outcomes.length && this.outcomes[slot] !== undefined) this.failures--;
    this.outcomes[slot] = failure;
    if (failure !== undefined) this.failures++;
    this.calls++;
    const seen = Math.min(this.calls, this.outcomes.length);
    if (this.calls < this.limit.minCalls || this.failures / seen <= this.limit.rate) return undefined;
    return this.words(seen);
  }

  private words(seen: number): string {
    const groups = new Map<string, number>();
    for (const reason of this.outcomes) if (reason !== undefined) groups.set(errorGroup(reason), (groups.get(errorGroup(reason)) ?? 0) + 1);
    const [common, count] = [...groups].sort((a, b) => b[1] - a[1])[0] ?? ['unknown', 0];
    const pct = (n: number) => `${Math.round(n * 100)} %`;
    return (
      `The target failed ${this.failures} of the last ${seen} calls (${pct(this.failures / seen)}, over the limit of ${pct(this.limit.rate)}); ` +
      `the most common error (${count} of them): ${common}. The run stopped; answers so far are saved. ` +
      'Fix the target and run again to go on, or set --max-error-rate (evalRunner.maxErrorRate) higher or to "off".'
    );
  }
}
