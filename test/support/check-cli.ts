import { readdir } from 'node:fs/promises';
import { runDhv } from './run-dhv.js';
import { loopDeviceNamesBackedBelow, mountPointsAtOrBelow, removeTempDir, tempDir } from './temp-dir.js';
import type { ConformanceReport } from '../../packages/harness/src/conformance/index.js';

/** A whole suite takes seconds on a quiet machine; on a busy CI host it can take much longer, which is not a failure. */
export const SUITE_TIMEOUT_MS = 240_000;

export interface CheckRun {
  exitCode: number;
  report: ConformanceReport;
  stderr: string;
  /** What was left in the --volumes-dir after the run (must be nothing). */
  leftovers: string[];
  /** Mounts and loop devices left under the --volumes-dir (must be none). */
  leftoverMounts: string[];
  leftoverLoopDevices: string[];
}

/** `dhv check <args>` as a user or CI runs it: stdout and stderr are pipes. */
export async function runCheck(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { exitCode, stdout, stderr } = await runDhv(['check', ...args], options);
  return { code: exitCode, stdout, stderr };
}

/** Runs `dhv check --json` as a user would, in a scratch --volumes-dir that is removed afterwards. */
export async function dhvCheck(plugin: string, args: string[] = []): Promise<CheckRun> {
  const scratch = await tempDir('check-test');
  try {
    const { code, stdout, stderr } = await runCheck([plugin, '--json', '--volumes-dir', scratch, ...args]);
    return {
      exitCode: code ?? 1,
      report: JSON.parse(stdout) as ConformanceReport,
      stderr,
      leftovers: await readdir(scratch),
      leftoverMounts: mountPointsAtOrBelow(scratch),
      leftoverLoopDevices: loopDeviceNamesBackedBelow(scratch),
    };
  } finally {
    await removeTempDir(scratch);
  }
}

export function failedRequired(report: ConformanceReport): string[] {
  return report.results.filter((r) => r.status === 'fail' && r.severity === 'required').map((r) => r.id);
}
