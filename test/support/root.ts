import { execFileSync } from 'node:child_process';

/**
 * Tests that need root and loop devices run for real where they can. Elsewhere they
 * skip with the reason, and DHV_REQUIRE_ROOT_TESTS=1 (set by .ci/run) turns that skip
 * into a failure, so CI can never pass without running them.
 */
export function rootTestsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (loop devices and mount)';
  try {
    execFileSync('/usr/sbin/losetup', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'needs losetup (util-linux)';
  }
  return undefined;
}

export const requireRootTests = process.env.DHV_REQUIRE_ROOT_TESTS === '1';

/**
 * Returns true when root tests should be skipped; throws when they are required but
 * cannot run. Use as `describe.skipIf(skipRootTests())(...)`.
 */
export function skipRootTests(): boolean {
  const reason = rootTestsUnavailable();
  if (reason === undefined) return false;
  if (requireRootTests) throw new Error(`DHV_REQUIRE_ROOT_TESTS=1 but root tests cannot run here: ${reason}`);
  console.warn(`skipping root tests: ${reason}`);
  return true;
}
