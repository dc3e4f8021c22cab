import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DHV_BIN, REPO_ROOT } from './checkout-paths.js';
import { loopDeviceNamesBackedBelow, mountPointsAtOrBelow } from './temp-dir.js';
import type { ConformanceReport } from '../../packages/harness/src/conformance/index.js';

const run = promisify(execFile);
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

/** Runs `dhv check --json` as a user would, in a scratch --volumes-dir that is removed afterwards. */
export async function dhvCheck(plugin: string, args: string[] = []): Promise<CheckRun> {
  const scratch = await mkdtemp(join(tmpdir(), 'dhv-check-test-'));
  try {
    const { exitCode, stdout, stderr } = await run(
      process.execPath,
      [DHV_BIN, 'check', plugin, '--json', '--volumes-dir', scratch, ...args],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    ).then(
      (r) => ({ exitCode: 0, ...r }),
      (err: { code: number; stdout: string; stderr: string }) => ({
        exitCode: err.code,
        stdout: err.stdout,
        stderr: err.stderr,
      }),
    );
    return {
      exitCode,
      report: JSON.parse(stdout) as ConformanceReport,
      stderr,
      leftovers: await readdir(scratch),
      leftoverMounts: mountPointsAtOrBelow(scratch),
      leftoverLoopDevices: loopDeviceNamesBackedBelow(scratch),
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Builds a reference plugin when another package's build has not produced it yet. */
export async function ensureBuilt(workspace: string, executable: string): Promise<string> {
  const file = join(REPO_ROOT, executable);
  if (!existsSync(file)) await run('npm', ['run', 'build', '-w', workspace], { cwd: REPO_ROOT });
  return file;
}

export function failedRequired(report: ConformanceReport): string[] {
  return report.results.filter((r) => r.status === 'fail' && r.severity === 'required').map((r) => r.id);
}
