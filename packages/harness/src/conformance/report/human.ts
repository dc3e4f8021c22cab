import { AREAS, type CheckResult, type ConformanceReport, type Status } from '../types.js';

const MARK: Record<Status, string> = { pass: 'PASS', fail: 'FAIL', warn: 'WARN', skip: 'SKIP' };

/** How text is shown: `plain` for pipes, files and NO_COLOR; `color` adds ANSI colours for a terminal. */
export interface TextStyle {
  pass(text: string): string;
  /** A required failure, and the FAILED line. */
  fail(text: string): string;
  /** A warning, a recommended failure, a required skip. */
  warn(text: string): string;
  /** What matters least: a recommended skip, the requirement and grade lines. */
  dim(text: string): string;
}

const same = (text: string) => text;
export const PLAIN: TextStyle = { pass: same, fail: same, warn: same, dim: same };
const ansi = (open: string, close: string) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
export const COLOR: TextStyle = {
  pass: ansi('32', '39'),
  fail: ansi('1;31', '22;39'),
  warn: ansi('33', '39'),
  dim: ansi('2', '22'),
};

/** The indent of the lines under a result's status line. */
const DETAIL = '      ';

/**
 * One check's result: its status line (mark, ID, time, what a non-pass means under the
 * severity policy), then why it did not pass, the requirement and its grade for a
 * failure, and what was measured. `idWidth` aligns the times of consecutive results.
 */
export function formatResult(r: CheckResult, strict: boolean, idWidth: number, style: TextStyle = PLAIN): string[] {
  const severity =
    r.status === 'fail' && r.severity === 'recommended'
      ? ' (recommended: a warning)'
      : r.status === 'skip' && r.severity === 'required'
        ? strict
          ? ' (required: fails under --strict)'
          : ' (required: not judged)'
        : '';
  const lines = [
    `${markOf(r, strict, style)}  ${r.id.padEnd(idWidth)}  ${formatMs(r.durationMs).padStart(8)}${severity}`,
  ];
  if (r.status !== 'pass' && r.reason) lines.push(...wrap(r.reason, DETAIL));
  if (r.status === 'fail') {
    lines.push(...wrap(`requirement: ${r.title} (${r.protocolRef})`, DETAIL).map(style.dim));
    lines.push(...wrap(`${r.severity} because ${r.gradeReason}`, DETAIL).map(style.dim));
  }
  for (const note of r.notes) lines.push(...wrap(`· ${note}`, DETAIL));
  return lines;
}

function markOf(r: CheckResult, strict: boolean, style: TextStyle): string {
  const mark = MARK[r.status];
  if (r.status === 'pass') return style.pass(mark);
  if (r.status === 'fail') return r.severity === 'required' ? style.fail(mark) : style.warn(mark);
  if (r.status === 'warn') return style.warn(mark);
  if (r.severity === 'required') return strict ? style.fail(mark) : style.warn(mark);
  return style.dim(mark);
}

/** The report's first line. */
export function formatHeader(plugin: string): string {
  return `dhv check ${plugin}`;
}

/**
 * The counts, then the verdict on one closing line that names the checks behind it: the
 * required failures (or, under --strict, the required skips) and the recommended failures.
 */
export function formatSummary(report: ConformanceReport, style: TextStyle = PLAIN): string[] {
  const s = report.summary;
  const ids = (keep: (r: CheckResult) => boolean) => report.results.filter(keep).map((r) => r.id);
  const requiredFailed = ids((r) => r.status === 'fail' && r.severity === 'required');
  const requiredSkipped = ids((r) => r.status === 'skip' && r.severity === 'required');
  const recommendedFailed = ids((r) => r.status === 'fail' && r.severity === 'recommended');
  const lines = [
    `${s.pass} passed, ${s.requiredFailed} required failed, ${s.recommendedFailed} recommended failed, ${s.warn} warned, ${s.skip} skipped (${s.requiredSkipped} required) in ${formatMs(report.durationMs)}`,
  ];
  if (report.stopped !== undefined) lines.push(style.fail(`STOPPED: ${report.stopped}`));
  const warnings =
    recommendedFailed.length > 0 ? `; recommended checks failed (warnings): ${recommendedFailed.join(', ')}` : '';
  if (report.interrupted) lines.push(style.fail('INTERRUPTED: the results above are incomplete'));
  else if (requiredFailed.length > 0)
    lines.push(style.fail(`FAILED: required checks failed: ${requiredFailed.join(', ')}`) + warnings);
  else if (!report.ok)
    lines.push(
      style.fail(
        `FAILED (--strict): required checks were skipped, so the plugin was not fully judged: ${requiredSkipped.join(', ')}`,
      ) + warnings,
    );
  else if (requiredSkipped.length > 0)
    lines.push(
      style.pass(
        `OK: no required check failed, but ${requiredSkipped.length} required ${requiredSkipped.length === 1 ? 'check was' : 'checks were'} skipped (${requiredSkipped.join(', ')}); --strict fails the run on that`,
      ) + warnings,
    );
  else lines.push(style.pass('OK: no required check failed') + warnings);
  return lines;
}

/** The whole report as a table grouped by area, for a report already made (the streamed form is in presenters/format-check). */
export function formatHuman(report: ConformanceReport, style: TextStyle = PLAIN): string {
  const lines: string[] = [formatHeader(report.plugin), ''];
  const idWidth = Math.max(...report.results.map((r) => r.id.length), 10);
  for (const area of AREAS) {
    const inArea = report.results.filter((r) => r.area === area);
    if (inArea.length === 0) continue;
    lines.push(area);
    for (const r of inArea) lines.push(...formatResult(r, report.strict, idWidth, style).map((l) => `  ${l}`));
    lines.push('');
  }
  lines.push(...formatSummary(report, style));
  return `${lines.join('\n')}\n`;
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

function wrap(text: string, indent: string, width = 100): string[] {
  // Each line of the text is its own paragraph (Nomad's words, then dhv's), its indent kept.
  return text.split('\n').flatMap((paragraph) => {
    const own = /^\s*/.exec(paragraph)![0];
    return wrapParagraph(paragraph.trim(), indent + own, width - own.length);
  });
}

function wrapParagraph(text: string, indent: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      out.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(indent + line);
  return out;
}

/** One line for a progress display. */
export function formatProgressLine(result: CheckResult, index: number, total: number): string {
  return `[${index + 1}/${total}] ${MARK[result.status]} ${result.id} (${formatMs(result.durationMs)})`;
}
