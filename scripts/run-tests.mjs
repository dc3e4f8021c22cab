#!/usr/bin/env node
// Runs vitest with the arguments given, then prints what the machine lacked for the tests
// that skipped, and one plain closing line ("tests: N passed, N failed, N skipped") that CI
// systems read, keeping vitest's exit code.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const report = join(tmpdir(), `dhv-vitest-${process.pid}.json`);
const skipLog = join(tmpdir(), `dhv-skips-${process.pid}.log`);
const vitest = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit', env: { ...process.env, DHV_SKIP_LOG: skipLog } },
);
let summary = 'tests: no report was written';
try {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  summary = `tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`;
  if (r.numTotalTests === 0) summary += ' (no test ran)';
} catch {
  // vitest did not get as far as writing its report; its exit code says why.
} finally {
  rmSync(report, { force: true });
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
console.log(summary);
process.exit(vitest.status ?? 1);
