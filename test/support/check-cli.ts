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
      ...(await leftoversIn(scratch)),
    };
  } finally {
    await removeTempDir(scratch);
  }
}

/**
 * What is left in `dir`, where `dhv check` made its run root, after the run: must be nothing. In its
 * --volumes-dir, every entry; in its TMPDIR, which others write into too, its run roots (`dhv-check-*`).
 */
export async function leftoversIn(
  dir: string,
  { tmpdir = false } = {},
): Promise<Pick<CheckRun, 'leftovers' | 'leftoverMounts' | 'leftoverLoopDevices'>> {
  return {
    leftovers: (await readdir(dir)).filter((name) => !tmpdir || name.startsWith('dhv-check-')),
    leftoverMounts: mountPointsAtOrBelow(dir),
    leftoverLoopDevices: loopDeviceNamesBackedBelow(dir),
  };
}

/** One report of `dhv check` as a person reads it (no --json): its closing lines, and the checks it marked PASS. */
export interface TextReport {
  /** "N passed, M required failed, ...". */
  summary: string;
  requiredFailed: number;
  /** "OK: ..." or "FAILED: required checks failed: ID, ...". */
  verdict: string;
  passed: string[];
}

/** The reports of every `dhv check` without --json in `output` (a docs example's), in order. */
export function textReports(output: string): TextReport[] {
  const reports: TextReport[] = [];
  let passed: string[] = [];
  const lines = output.split('\n');
  for (const [i, line] of lines.entries()) {
    const pass = /^\s*(?:\[\d+\/\d+\] )?PASS {1,2}(\S+)/.exec(line);
    if (pass) passed.push(pass[1]!);
    const summary = /^(\d+) passed, (\d+) required failed, /.exec(line);
    if (!summary) continue;
    const verdict = lines.slice(i + 1).find((l) => /^(OK|FAILED|INTERRUPTED)\b/.test(l)) ?? '(no verdict line)';
    reports.push({ summary: line, requiredFailed: Number(summary[2]), verdict, passed });
    passed = [];
  }
  return reports;
}

export function failedRequired(report: ConformanceReport): string[] {
  return report.results.filter((r) => r.status === 'fail' && r.severity === 'required').map((r) => r.id);
}
