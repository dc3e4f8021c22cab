import { AREAS, type ConformanceReport } from '../types.js';

/** JUnit XML for CI systems: a testsuite per area, a testcase per check; skip and warn are not failures. */
export function formatJUnit(report: ConformanceReport): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const s = report.summary;
  out.push(
    `<testsuites name="dhv check" tests="${report.results.length}" failures="${s.fail}" skipped="${s.skip}" time="${seconds(report.durationMs)}" timestamp="${report.startedAt}">`,
  );
  for (const area of AREAS) {
    const results = report.results.filter((r) => r.area === area);
    if (results.length === 0) continue;
    const failures = results.filter((r) => r.status === 'fail').length;
    const skipped = results.filter((r) => r.status === 'skip').length;
    const time = results.reduce((t, r) => t + r.durationMs, 0);
    out.push(`  <testsuite name="${area}" tests="${results.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(time)}">`);
    for (const r of results) {
      out.push(`    <testcase classname="dhv.${area}" name="${xml(r.id)}" time="${seconds(r.durationMs)}">`);
      out.push(`      <properties><property name="severity" value="${r.severity}"/><property name="requirement" value="${xml(r.title)}"/><property name="protocol" value="${xml(r.protocolRef)}"/></properties>`);
      if (r.status === 'fail') out.push(`      <failure message="${xml(r.reason ?? '')}" type="${r.severity}">${xml(r.title)}</failure>`);
      if (r.status === 'skip') out.push(`      <skipped message="${xml(r.reason ?? '')}"/>`);
      const output = [...(r.status === 'warn' ? [`warning: ${r.reason ?? ''}`] : []), ...r.notes];
      if (output.length > 0) out.push(`      <system-out>${xml(output.join('\n'))}</system-out>`);
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
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
