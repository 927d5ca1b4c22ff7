/** A plain counting gate: at most `size` holders at once; the others wait, in order. */
export class Gate {
  private held = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async enter(): Promise<void> {
    while (this.held >= this.size) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.held++;
  }

  leave(): void {
    this.held--;
    this.waiters.shift()?.();
  }
}
