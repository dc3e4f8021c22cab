import { formatProgressLine } from '../conformance/report/human.js';
import type { ProgressEvent } from '../conformance/runner.js';
import type { Check } from '../conformance/types.js';

/** `dhv check --list --json`: one row a check, in catalogue order. */
export function checkListRows(catalogue: readonly Check[]) {
  return catalogue.map(({ id, area, title, protocolRef, severity, gradeReason, needs }) => ({
    id,
    area,
    severity,
    gradeReason,
    title,
    protocolRef,
    needs: needs ?? [],
  }));
}

/** `dhv check --list`: ID, severity and title, in aligned columns. */
export function checkListText(catalogue: readonly Check[]): string {
  const width = Math.max(...catalogue.map((c) => c.id.length));
  return catalogue.map((c) => `${c.id.padEnd(width)}  ${c.severity.padEnd(11)}  ${c.title}\n`).join('');
}

/**
 * What `dhv check` writes to a terminal's stderr for one progress event: the status line
 * replacing the previous one, and after the last check the line erased before the report.
 */
export function checkProgressText(event: ProgressEvent): string {
  const line =
    event.kind === 'start'
      ? `[${event.index + 1}/${event.total}] ${event.check.id} …`
      : formatProgressLine(event.result, event.index, event.total);
  const erase = '\r\x1b[2K';
  return event.kind === 'done' && event.index + 1 === event.total ? `${erase}${line}${erase}` : `${erase}${line}`;
}
