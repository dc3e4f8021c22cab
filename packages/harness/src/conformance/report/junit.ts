import { verdictOf } from '../policy.js';
import { AREAS, type ConformanceReport } from '../types.js';

/**
 * JUnit XML for CI systems: a testsuite per area, a testcase per check, judged by the
 * one severity policy (verdictOf): only a required failure (and, under strict, a
 * required skip) is a <failure>. A recommended failure or a warning is a passing
 * testcase whose <system-out> says so, with the property outcome=fail or warn.
 */
export function formatJUnit(report: ConformanceReport): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const verdicts = report.results.map((r) => verdictOf(r, report.strict));
  const count = (v: string, of: readonly string[] = verdicts) => of.filter((x) => x === v).length;
  out.push(
    `<testsuites name="dhv check" tests="${report.results.length}" failures="${count('fail')}" skipped="${count('skip')}" time="${seconds(report.durationMs)}" timestamp="${report.startedAt}">`,
  );
  for (const area of AREAS) {
    const results = report.results.filter((r) => r.area === area);
    if (results.length === 0) continue;
    const areaVerdicts = results.map((r) => verdictOf(r, report.strict));
    const failures = count('fail', areaVerdicts);
    const skipped = count('skip', areaVerdicts);
    const time = results.reduce((t, r) => t + r.durationMs, 0);
    out.push(
      `  <testsuite name="${area}" tests="${results.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(time)}">`,
    );
    for (const r of results) {
      out.push(`    <testcase classname="dhv.${area}" name="${xml(r.id)}" time="${seconds(r.durationMs)}">`);
      const verdict = verdictOf(r, report.strict);
      out.push(
        `      <properties><property name="severity" value="${r.severity}"/><property name="outcome" value="${r.status}"/><property name="requirement" value="${xml(r.title)}"/><property name="protocol" value="${xml(r.protocolRef)}"/><property name="grade" value="${xml(r.gradeReason)}"/></properties>`,
      );
      if (verdict === 'fail' && r.status === 'fail')
        out.push(`      <failure message="${xml(r.reason ?? '')}" type="required">${xml(r.title)}</failure>`);
      if (verdict === 'fail' && r.status === 'skip')
        out.push(
          `      <failure message="${xml(`skipped, and --strict fails a skipped required check: ${r.reason ?? ''}`)}" type="required-skipped">${xml(r.title)}</failure>`,
        );
      if (verdict === 'skip')
        out.push(
          `      <skipped message="${xml(`${r.severity === 'required' ? 'required check not judged: ' : ''}${r.reason ?? ''}`)}"/>`,
        );
      const soft =
        r.status === 'fail' && r.severity === 'recommended'
          ? [`recommended check failed (a warning, not a failure): ${r.reason ?? ''}`]
          : [];
      const output = [...soft, ...(r.status === 'warn' ? [`warning: ${r.reason ?? ''}`] : []), ...r.notes];
      if (output.length > 0) out.push(`      <system-out>${xml(output.join('\n'))}</system-out>`);
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

/**
 * JUnit XML for a run that could not start (the plugin is missing, setup failed): one
 * testcase with an <error>, so CI shows the one reason rather than an empty or absent report.
 */
export function formatJUnitError(error: { code: string; message: string }): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<testsuites name="dhv check" tests="1" failures="0" errors="1" skipped="0">',
    '  <testsuite name="dhv check" tests="1" failures="0" errors="1" skipped="0">',
    '    <testcase classname="dhv" name="dhv check">',
    `      <error type="${xml(error.code)}" message="${xml(error.message)}"/>`,
    '    </testcase>',
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/** Escapes text for XML attributes and content, dropping characters XML 1.0 cannot hold. */
function xml(text: string): string {
  return text
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}
