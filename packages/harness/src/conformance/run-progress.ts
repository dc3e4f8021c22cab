import type { Check, CheckResult } from './types.js';

/** `index` counts the checks finished before this event, so a display can show `[index + 1/total]`. */
export type ProgressEvent =
  | { kind: 'start'; check: Check; index: number; total: number }
  | { kind: 'done'; result: CheckResult; index: number; total: number };

/** A conformance run's results as they come in, in catalogue order, and what its progress display was told. */
export class RunProgress {
  /** One slot per check, filled as each finishes; a fault's failure comes after them when no check of that ID ran. */
  readonly results: CheckResult[];
  private finished = 0;
  /** IDs of the faults' failures the display was shown as they were found. */
  private readonly shown = new Set<string>();

  constructor(
    private readonly total: number,
    private readonly onProgress: ((event: ProgressEvent) => void) | undefined,
  ) {
    this.results = new Array<CheckResult>(total);
  }

  started(check: Check): void {
    this.onProgress?.({ kind: 'start', check, index: this.finished, total: this.total });
  }

  done(index: number, result: CheckResult): void {
    this.results[index] = result;
    this.onProgress?.({ kind: 'done', result, index: this.finished++, total: this.total });
  }

  /** A check the run did not start, with the reason it says. */
  notStarted(index: number, result: CheckResult): void {
    this.results[index] = result;
  }

  /**
   * A fault of the whole run (a held output, a space bound), shown the moment a check ran
   * into it; `foundBy` is that check, and when it is the check judging the fault, that
   * check says it itself.
   */
  faultFound(failure: CheckResult, foundBy: string): void {
    if (foundBy === failure.id) return;
    this.shown.add(failure.id);
    this.onProgress?.({ kind: 'done', result: failure, index: this.finished, total: this.total });
  }

  /** After the run, one required failure says a fault, whichever check ran into it first, unless that check was the one judging it. */
  recordFault(failure: CheckResult): void {
    const at = this.results.findIndex((r) => r.id === failure.id);
    if (at === -1) this.results.push(failure);
    else if (this.results[at]!.status !== 'fail') this.results[at] = failure;
    if (!this.shown.has(failure.id) && (at === -1 || this.results[at] === failure))
      this.onProgress?.({ kind: 'done', result: failure, index: this.finished++, total: this.total });
  }
}
