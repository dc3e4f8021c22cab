// Prints, as Markdown, how long each test file took in a vitest JSON report and, given
// coverage/coverage-summary.json, the line and branch coverage of packages/*/src. The
// figures in bench/TESTS.md come from it; with --cpu, each file's processor time too
// (what DHV_TEST_CPU recorded: the test process's and its waited-for children's):
//   DHV_TEST_REPORT=/tmp/report.json DHV_TEST_CPU=/tmp/cpu.jsonl npm run test:coverage
//   node bench/test-times.mjs /tmp/report.json coverage/coverage-summary.json --cpu /tmp/cpu.jsonl
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { cpu: { type: 'string' } } });
const [reportFile, coverageFile] = positionals;
if (!reportFile) {
  process.stderr.write(
    'usage: node bench/test-times.mjs <vitest JSON report> [coverage-summary.json] [--cpu <DHV_TEST_CPU file>]\n',
  );
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
const cpuOf = new Map(
  values.cpu
    ? readFileSync(values.cpu, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .map((r) => [r.file, r.self + r.children])
    : [],
);
const files = report.testResults
  .map((f) => ({
    file: relative(process.cwd(), f.name),
    seconds: (f.endTime - f.startTime) / 1000,
    cpu: cpuOf.get(f.name),
    tests: f.assertionResults.length,
    failed: f.assertionResults.filter((a) => a.status === 'failed').length,
  }))
  .sort((a, b) => (b.cpu ?? b.seconds) - (a.cpu ?? a.seconds));
const total = files.reduce((sum, f) => sum + f.seconds, 0);
const totalCpu = files.reduce((sum, f) => sum + (f.cpu ?? 0), 0);
const wall = (Math.max(...report.testResults.map((f) => f.endTime)) - report.startTime) / 1000;

const lines = [
  `${files.length} files, ${report.numTotalTests} tests (${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests + report.numTodoTests} skipped)`,
  `wall ${wall.toFixed(0)} s from start to the last file's end; ${total.toFixed(0)} s summed over files` +
    (cpuOf.size > 0 ? `; ${totalCpu.toFixed(0)} CPU-s summed over files` : ''),
  '',
  cpuOf.size > 0 ? '| file | s | CPU-s | CPU share | tests |' : '| file | s | share | tests |',
  cpuOf.size > 0 ? '|---|---:|---:|---:|---:|' : '|---|---:|---:|---:|',
  ...files.map((f) => {
    const tests = `${f.tests}${f.failed ? ` (${f.failed} failed)` : ''}`;
    return cpuOf.size > 0
      ? `| ${f.file} | ${f.seconds.toFixed(1)} | ${f.cpu?.toFixed(1) ?? '?'} | ${f.cpu === undefined ? '?' : ((100 * f.cpu) / totalCpu).toFixed(1) + '%'} | ${tests} |`
      : `| ${f.file} | ${f.seconds.toFixed(1)} | ${((100 * f.seconds) / total).toFixed(1)}% | ${tests} |`;
  }),
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
