#!/usr/bin/env node
// Runs vitest with the arguments given, then prints one plain closing line
// ("tests: N passed, N failed, N skipped") that CI systems read, keeping vitest's exit code.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const report = join(tmpdir(), `dhv-vitest-${process.pid}.json`);
const vitest = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
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
console.log(summary);
process.exit(vitest.status ?? 1);
