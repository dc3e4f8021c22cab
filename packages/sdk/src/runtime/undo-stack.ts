/**
 * Steps taken so far, each with the action that reverses it. A failed create unwinds
 * the stack so nothing it made is left behind (the agent never calls delete after a
 * failed create). The runtime keeps one per handler run behind `ctx.undo`; a plugin that
 * must undo earlier (inside a lock, say) keeps its own.
 */
export class UndoStack {
  private readonly steps: { what: string; undo: () => void | Promise<void> }[] = [];

  push(what: string, undo: () => void | Promise<void>): void {
    this.steps.push({ what, undo });
  }

  /** The work is kept: nothing is undone. */
  commit(): void {
    this.steps.length = 0;
  }

  /** Undoes every step, newest first, and returns a description of each undo that failed. */
  async unwind(log: (message: string) => void): Promise<string[]> {
    const failures: string[] = [];
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      try {
        await step.undo();
        log(`undid: ${step.what}`);
      } catch (err) {
        const message = `could not undo "${step.what}": ${err instanceof Error ? err.message : String(err)}`;
        log(message);
        failures.push(message);
      }
    }
    return failures;
  }
}
