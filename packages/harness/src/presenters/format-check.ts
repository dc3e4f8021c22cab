import {
  COLOR,
  PLAIN,
  formatHeader,
  formatResult,
  formatSummary,
  type TextStyle,
} from '../conformance/report/human.js';
import { CHECK_BOUNDS_TEXT } from '../conformance/space-budget.js';
import type { ProgressEvent } from '../conformance/runner.js';
import { colorOn } from './format-volume.js';
import type { Check, CheckResult, ConformanceReport } from '../conformance/types.js';

/** `dhv check --list --json`: one row a check, in catalogue order. */
export function checkListRows(catalogue: readonly Check[]) {
  return catalogue.map(({ id, area, title, protocolRef, severity, gradeReason, needs, asks }) => ({
    id,
    area,
    severity,
    gradeReason,
    title,
    protocolRef,
    needs: needs ?? [],
    asks: asks ?? NO_VOLUME,
  }));
}

/** What a check without `asks` asks of the plugin. */
const NO_VOLUME = 'no volume: fingerprint only';

/**
 * `dhv check --list`: ID, severity and title, in aligned columns, and below each what it
 * asks of the plugin; the closing lines state the capacity bound and the space bound.
 */
export function checkListText(catalogue: readonly Check[]): string {
  const width = Math.max(...catalogue.map((c) => c.id.length));
  const rows = catalogue.map(
    (c) =>
      `${c.id.padEnd(width)}  ${c.severity.padEnd(11)}  ${c.title}\n${' '.repeat(width + 15)}asks: ${c.asks ?? NO_VOLUME}\n`,
  );
  return `${rows.join('')}\n${CHECK_BOUNDS_TEXT}\n`;
}

/** Where the presenter writes: a stream, and whether it is a terminal. */
export interface TextSink {
  write(text: string): unknown;
  isTTY?: boolean;
  /** A terminal's width: the status line is cut to it, or erasing it would leave its wrapped rest. */
  columns?: number;
}

export interface CheckPresenterOptions {
  /** Where the results and the summary go (stdout). */
  out: TextSink;
  /** Where the status line of a terminal goes (stderr); nothing is drawn unless it is a terminal. */
  status?: TextSink;
  /** Colours; `useColor` decides. */
  style?: TextStyle;
  /** The width check IDs are padded to, so that consecutive results line up. */
  idWidth: number;
  strict: boolean;
}

const ERASE_LINE = '\r\x1b[2K';

/**
 * `dhv check` as it runs: the header, then each check's result the moment it finishes
 * (so a pipe or a CI log sees every line as it is judged), then the summary and the
 * closing line. On a terminal a status line on stderr says what is running; it is
 * erased before each result and redrawn after it.
 */
export class CheckPresenter {
  private readonly style: TextStyle;
  private readonly running = new Set<string>();
  private finished = 0;
  private total = 0;
  private statusShown = false;
  /** Each finished check's status, to trace a skip to the check whose failure caused it. */
  private readonly seen = new Map<string, CheckResult['status']>();
  /** A skip caused by another check's failure or skip: the check at the root of the chain. */
  private readonly rootOf = new Map<string, string>();
  /** The skips held back, by their root cause, to be said once each in the summary. */
  private readonly heldSkips = new Map<string, CheckResult[]>();
  /** Notes already printed: checks sharing one run (the explorer's) note it once in the text, each in the report. */
  private readonly printedNotes = new Set<string>();

  constructor(private readonly options: CheckPresenterOptions) {
    this.style = options.style ?? PLAIN;
  }

  header(plugin: string): void {
    this.options.out.write(`${formatHeader(plugin)}\n\n`);
  }

  /** The runner's progress events: a start updates the status line, a finished check is printed. */
  progress(event: ProgressEvent): void {
    this.total = event.total;
    if (event.kind === 'start') {
      this.running.add(event.check.id);
      this.drawStatus();
    } else {
      this.running.delete(event.result.id);
      this.result(event.result);
    }
  }

  /** One finished check (a catalogue check's, or any other result that flows through the report). */
  result(result: CheckResult): void {
    this.finished++;
    this.seen.set(result.id, result.status);
    const root = this.rootCause(result);
    if (root !== undefined) {
      this.rootOf.set(result.id, root);
      this.heldSkips.set(root, [...(this.heldSkips.get(root) ?? []), result]);
      this.drawStatus();
      return;
    }
    this.eraseStatus();
    const { strict, idWidth } = this.options;
    const notes = result.notes.filter((note) => !this.printedNotes.has(note));
    for (const note of notes) this.printedNotes.add(note);
    this.options.out.write(`${formatResult({ ...result, notes }, strict, idWidth, this.style).join('\n')}\n`);
    this.drawStatus();
  }

  summary(report: ConformanceReport): void {
    this.eraseStatus();
    this.running.clear();
    const held = [...this.heldSkips].map(([root, skipped]) =>
      formatHeldSkips(root, this.seen.get(root), skipped, this.options.strict, this.style),
    );
    if (held.length > 0) this.options.out.write(`${held.join('\n')}\n`);
    this.options.out.write(`\n${formatSummary(report, this.style).join('\n')}\n`);
  }

  /** For a check skipped because one it needs did not pass, the check whose outcome started the chain. */
  private rootCause(result: CheckResult): string | undefined {
    if (result.status !== 'skip') return undefined;
    const blocker = NEEDS.exec(result.reason ?? '')?.[1];
    if (blocker === undefined || !this.seen.has(blocker)) return undefined;
    return this.rootOf.get(blocker) ?? blocker;
  }

  private drawStatus(): void {
    const status = this.options.status;
    if (!status?.isTTY || this.running.size === 0) return;
    const line = `[${this.finished}/${this.total}] running ${[...this.running].join(', ')} …`;
    const width = (status.columns ?? 80) - 1;
    status.write(`${ERASE_LINE}${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
    this.statusShown = true;
  }

  private eraseStatus(): void {
    if (!this.statusShown) return;
    this.options.status?.write(ERASE_LINE);
    this.statusShown = false;
  }
}

/** The reason the runner gives a check skipped for another one: `needs <id>, which failed`. */
const NEEDS = /^needs (\S+), which (?:failed|was skipped)$/;

/** The checks one failure (or skip) kept from running, said once: the cause and the count. */
function formatHeldSkips(
  root: string,
  rootStatus: CheckResult['status'] | undefined,
  skipped: readonly CheckResult[],
  strict: boolean,
  style: TextStyle,
): string {
  const required = skipped.filter((r) => r.severity === 'required').length;
  const mark = required > 0 && strict ? style.fail('SKIP') : required > 0 ? style.warn('SKIP') : style.dim('SKIP');
  const verdict =
    required === 0
      ? ''
      : strict
        ? `${required} required: fails under --strict; `
        : `${required} required: not judged; `;
  const count = `${skipped.length} check${skipped.length === 1 ? '' : 's'}`;
  const cause = `${root} ${rootStatus === 'fail' ? 'failed' : 'was skipped'}`;
  return `${mark}  ${count} not run because ${cause} (${verdict}--json and --junit list each)`;
}

/** The check's colours where the volume commands colour (colorOn: a terminal, NO_COLOR, FORCE_COLOR). */
export function useColor(out: TextSink, env: NodeJS.ProcessEnv = process.env): TextStyle {
  return colorOn(out, env) ? COLOR : PLAIN;
}
