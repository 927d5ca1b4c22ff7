/** A plain counting gate: at most `size` holders at once; the others wait, in order. */
export class Gate {
  private held = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /**
   * Takes a place: undefined when one was free (taken at once, nothing to await: no promise, no turn of the event
   * loop, twice per trace), else a promise that resolves once a leaving holder has passed its place on.
   */
  enter(): Promise<void> | undefined {
    if (this.held < this.size) {
      this.held++;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /**
   * Gives the place up, to the first waiter when there is one (it holds it already when it wakes): a newcomer cannot
   * take it meanwhile and send the waiter to the back of the queue to wait again.
   */
  leave(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held--;
  }
}
