#!/usr/bin/env node
// Runs vitest with the arguments given, then prints what the machine lacked for the tests
// that skipped, the slowest files, and one plain closing line ("tests: N passed, N failed,
// N skipped") that CI systems read, keeping vitest's exit code. DHV_TEST_REPORT=<file> keeps
// vitest's JSON report (every file's and test's duration) there. The run's temporary files
// go to a tmpfs folder of its own (scripts/suite-tmpdir.mjs says why), removed at its end.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { finishSuiteTmpdir, suiteTmpdir } from './suite-tmpdir.mjs';

const keptReport = process.env.DHV_TEST_REPORT;
const report = keptReport || join(tmpdir(), `dhv-vitest-${process.pid}.json`);
const skipLog = join(tmpdir(), `dhv-skips-${process.pid}.log`);
// Node reads NODE_EXTRA_CA_CERTS at every start (36 ms of processor time for the system bundle
// on the 2-core machine the suite is timed on): set aside for the run, and given back by
// test/support/registry-env.ts to what reaches the npm registry.
const { NODE_EXTRA_CA_CERTS: extraCa, ...env } = process.env;
const runTmp = suiteTmpdir();
// A Ctrl-C reaches vitest too, which stops its tests and exits: this runner waits for that and
// then removes the run's TMPDIR (up to 0.7 GB of memory on its tmpfs), however often it is pressed.
if (runTmp?.own) process.on('SIGINT', () => {});
const vitest = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env: {
      ...env,
      DHV_SKIP_LOG: skipLog,
      ...(runTmp ? { TMPDIR: runTmp.dir } : {}),
      ...(extraCa ? { DHV_TEST_NODE_EXTRA_CA_CERTS: extraCa } : {}),
    },
  },
);
const tmpLines = runTmp ? finishSuiteTmpdir(runTmp) : [];
let summary = 'tests: no report was written';
let slowest = [];
try {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  summary = `tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`;
  if (r.numTotalTests === 0) summary += ' (no test ran)';
  slowest = r.testResults
    .map((f) => ({ file: relative(process.cwd(), f.name), seconds: (f.endTime - f.startTime) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 5);
} catch {
  // vitest did not get as far as writing its report; its exit code says why.
} finally {
  if (!keptReport) rmSync(report, { force: true });
}
let reasons = [];
try {
  reasons = [...new Set(readFileSync(skipLog, 'utf8').split('\n').filter(Boolean))].sort();
} catch {
  // nothing skipped for want of something
} finally {
  rmSync(skipLog, { force: true });
}
if (reasons.length > 0) {
  console.log('\nSkipped, because this machine lacks what they need (DHV_REQUIRE_ROOT_TESTS=1 makes these failures):');
  for (const reason of reasons) console.log(`  - ${reason}`);
}
if (slowest.length > 0) {
  console.log('\nSlowest files:');
  for (const { file, seconds } of slowest) console.log(`  ${seconds.toFixed(1).padStart(7)} s  ${file}`);
}
if (tmpLines.length > 0) console.log(`\n${tmpLines.join('\n')}`);
console.log(summary);
process.exit(vitest.status ?? 1);
