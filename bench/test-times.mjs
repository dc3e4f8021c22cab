// Prints, as Markdown, how long each test file took in a vitest JSON report and, given
// coverage/coverage-summary.json, the line and branch coverage of packages/*/src. The
// figures in bench/TESTS.md come from it:
//   DHV_TEST_REPORT=/tmp/report.json npm run test:coverage
//   node bench/test-times.mjs /tmp/report.json coverage/coverage-summary.json
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [reportFile, coverageFile] = process.argv.slice(2);
if (!reportFile) {
  process.stderr.write('usage: node bench/test-times.mjs <vitest JSON report> [coverage-summary.json]\n');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
const files = report.testResults
  .map((f) => ({
    file: relative(process.cwd(), f.name),
    seconds: (f.endTime - f.startTime) / 1000,
    tests: f.assertionResults.length,
    failed: f.assertionResults.filter((a) => a.status === 'failed').length,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const total = files.reduce((sum, f) => sum + f.seconds, 0);
const wall = (Math.max(...report.testResults.map((f) => f.endTime)) - report.startTime) / 1000;

const lines = [
  `${files.length} files, ${report.numTotalTests} tests (${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests + report.numTodoTests} skipped)`,
  `wall ${wall.toFixed(0)} s from start to the last file's end; ${total.toFixed(0)} s summed over files`,
  '',
  '| file | s | share | tests |',
  '|---|---:|---:|---:|',
  ...files.map(
    (f) =>
      `| ${f.file} | ${f.seconds.toFixed(1)} | ${((100 * f.seconds) / total).toFixed(1)}% | ${f.tests}${f.failed ? ` (${f.failed} failed)` : ''} |`,
  ),
];
if (coverageFile) {
  const { total: t } = JSON.parse(readFileSync(coverageFile, 'utf8'));
  const pct = (k) => `${t[k].pct}% (${t[k].covered}/${t[k].total})`;
  lines.push(
    '',
    `coverage of packages/*/src: lines ${pct('lines')}, branches ${pct('branches')}, functions ${pct('functions')}`,
  );
}
console.log(lines.join('\n'));
