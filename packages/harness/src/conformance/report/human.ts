import { AREAS, type CheckResult, type ConformanceReport, type Status } from '../types.js';

const MARK: Record<Status, string> = { pass: 'PASS', fail: 'FAIL', warn: 'WARN', skip: 'SKIP' };

/** The report as a table grouped by area: status, check ID, timing, why for each non-pass, and what was measured. */
export function formatHuman(report: ConformanceReport): string {
  const lines: string[] = [`dhv check ${report.plugin}`, ''];
  const idWidth = Math.max(...report.results.map((r) => r.id.length), 10);
  for (const area of AREAS) {
    const inArea = report.results.filter((r) => r.area === area);
    if (inArea.length === 0) continue;
    lines.push(area);
    for (const r of inArea) {
      const severity =
        r.status === 'fail' && r.severity === 'recommended'
          ? ' (recommended: a warning)'
          : r.status === 'skip' && r.severity === 'required'
            ? report.strict
              ? ' (required: fails under --strict)'
              : ' (required: not judged)'
            : '';
      lines.push(`  ${MARK[r.status]}  ${r.id.padEnd(idWidth)}  ${formatMs(r.durationMs).padStart(8)}${severity}`);
      if (r.status !== 'pass' && r.reason) lines.push(...wrap(r.reason, '        '));
      if (r.status === 'fail') lines.push(`        requirement: ${r.title} (${r.protocolRef})`);
      if (r.status === 'fail') lines.push(...wrap(`${r.severity} because ${r.gradeReason}`, '        '));
      for (const note of r.notes) lines.push(...wrap(`· ${note}`, '        '));
    }
    lines.push('');
  }
  const s = report.summary;
  lines.push(
    `${s.pass} passed, ${s.requiredFailed} required failed, ${s.recommendedFailed} recommended failed, ${s.warn} warned, ${s.skip} skipped (${s.requiredSkipped} required) in ${formatMs(report.durationMs)}`,
  );
  const skipped = report.results.filter((r) => r.status === 'skip' && r.severity === 'required').map((r) => r.id);
  if (report.interrupted) lines.push('INTERRUPTED: the results above are incomplete');
  else if (!report.ok && s.requiredFailed === 0)
    lines.push(
      `FAILED (--strict): required checks were skipped, so the plugin was not fully judged: ${skipped.join(', ')}`,
    );
  else if (!report.ok) lines.push('FAILED: the plugin does not meet the required checks above');
  else if (skipped.length > 0)
    lines.push(
      `OK: no required check failed, but ${skipped.length} required ${skipped.length === 1 ? 'check was' : 'checks were'} skipped (${skipped.join(', ')}); --strict fails the run on that`,
    );
  else lines.push('OK: no required check failed');
  return `${lines.join('\n')}\n`;
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

function wrap(text: string, indent: string, width = 100): string[] {
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
