import type { TargetUsage } from '../targets/target';
import type { RunPrice } from './prices';
import { NO_PRICE, totalCost, usdOf, usdText } from './runCost';
import type { RunInfo } from '../store/runHistory';
import { charTokens } from './tokens';

/** The budget's state as a stop journals it: the budget, what the evaluation's runs spent, what is left (USD). */
export interface BudgetState {
  usd: number;
  spent: number;
  left: number;
}

/**
 * A run's budget (--budget, evalRunner.budgetUsd): a call starts only when the spend so far, the estimates held for
 * the calls in flight and this call's own estimate stay within it. A call's estimate is its prompt's tokens (the most
 * tokens per character seen so far, at least one per four characters) and an answer as long as the prompt or twice
 * the mean answer so far, whichever is more (max_tokens when set); the call's reported usage then replaces it.
 * Since it is an estimate, an answer far longer than any before can still pass the budget by that one call's excess.
 */
export class Budget {
  private spent: number;
  private held = 0;
  // The calls holding an estimate: none means nothing is held, whatever floating point left of `held` (3e-21 once).
  private holds = 0;
  private tokensPerChar = 0.25;
  private answers = 0;
  private readonly waiting: Array<() => void> = [];
  private answerTokens = 0;

  constructor(
    readonly usd: number,
    /** What the evaluation's earlier runs spent: a rerun with a larger budget goes on from there. */
    spentBefore: number,
    private readonly price: RunPrice,
    /** max_tokens, where the target sets one: no answer is longer. */
    private readonly maxAnswerTokens?: number,
  ) {
    this.spent = spentBefore;
  }

  /**
   * The estimate held for a call of this prompt; undefined when the call could pass the budget with nothing in flight
   * (then none is held). While calls are in flight whose estimates leave it no room, it waits for them to end.
   */
  async admit(prompt: string, signal: AbortSignal): Promise<number | undefined> {
    for (;;) {
      const held = this.reserve(prompt);
      if (held !== undefined || this.holds === 0 || signal.aborted) return held;
      // Woken by a call that ends, or by the run's cancel (a Ctrl-C must not wait for room that never comes).
      await new Promise<void>((resolve) => {
        const wake = () => (signal.removeEventListener('abort', wake), resolve());
        this.waiting.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** What a call of this prompt is estimated to cost (USD), nothing held. */
  estimate(prompt: string): number {
    const input = Math.max(charTokens(prompt), Math.ceil(prompt.length * this.tokensPerChar)) + 16;
    // An answer as long as its prompt (an echo, a rewrite) or twice the mean answer yet, whichever is more; max_tokens bounds it.
    const mean = this.answers ? this.answerTokens / this.answers : 0;
    const output = this.maxAnswerTokens ?? Math.max(Math.ceil(2 * mean), input);
    return usdOf({ inputTokens: input, outputTokens: output }, this.price);
  }

  /** Whether this much more (USD) fits beside the spend and the estimates held. */
  fits(usd: number): boolean {
    return this.spent + this.held + usd <= this.usd;
  }

  /** The estimate held for a call of this prompt, or undefined when it does not fit now (then none is held). */
  reserve(prompt: string): number | undefined {
    const usd = this.estimate(prompt);
    if (!this.fits(usd)) return undefined;
    this.held += usd;
    this.holds++;
    return usd;
  }

  /** A call held for that never started: its estimate let go, nothing spent. */
  release(held: number): void {
    this.holds = Math.max(0, this.holds - 1);
    this.held = this.holds === 0 ? 0 : Math.max(0, this.held - held);
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** A call ended: its estimate let go, its reported usage spent (a call without usage spends its estimate: never less). */
  settle(held: number, prompt: string, usage: TargetUsage | undefined): void {
    this.release(held);
    if (!usage) {
      this.spent += held;
      return;
    }
    const inputTokens = usage.promptTokens ?? 0;
    const outputTokens = usage.completionTokens ?? 0;
    this.spent += usdOf({ inputTokens, outputTokens, cachedTokens: usage.cachedTokens ?? 0 }, this.price);
    if (prompt.length > 0) this.tokensPerChar = Math.max(this.tokensPerChar, inputTokens / prompt.length);
    this.answers++;
    this.answerTokens += outputTokens;
  }

  get state(): BudgetState {
    return { usd: this.usd, spent: this.spent, left: Math.max(0, this.usd - this.spent) };
  }
}

/** The words of a budget stop, with the spend and what is left. */
export function budgetText(state: BudgetState): string {
  const usd = usdText;
  return `Budget reached: ${usd(state.spent)} spent of ${usd(state.usd)}, ${usd(state.left)} left, not enough for another call. Answers so far are saved; run again with a larger --budget to go on.`;
}

/** The run's budget, if it has one: what the evaluation's earlier runs spent counts against it. */
export function runBudget(options: { budgetUsd?: number | undefined; price?: RunPrice | undefined }, runs: readonly RunInfo[]): Budget | undefined {
  if (options.budgetUsd === undefined) return undefined;
  if (!options.price) throw new TypeError(`A budget needs a price: ${NO_PRICE}.`);
  return new Budget(options.budgetUsd, totalCost(runs).usd ?? 0, options.price);
}
