import { accessSync, appendFileSync, constants } from 'node:fs';

/**
 * The one place a test says what the machine must have. A test whose requirement is not
 * met skips, naming what is missing and the exact command that installs it; with
 * DHV_REQUIRE_ROOT_TESTS=1 (set by .ci/run) the same skip is a failure, so CI can never
 * pass without running it. Every reason is also appended to $DHV_SKIP_LOG, which
 * scripts/run-tests.mjs prints above its closing line.
 */
export interface Requirement {
  /** What is missing, e.g. "mkfs.xfs (apt-get install xfsprogs)". */
  missing: string;
}

const requireEverything = process.env.DHV_REQUIRE_ROOT_TESTS === '1';

/** The directories the reference plugins search for system tools (they run with no PATH). */
const TOOL_DIRS = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];

function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

export function root(): Requirement | undefined {
  return runningAsRoot() ? undefined : { missing: 'root (loop devices, mount, chown)' };
}

/** An executable system tool, found the way the plugins find it; `debianPackage` provides it. */
export function tool(name: string, debianPackage: string): Requirement | undefined {
  return toolPath(name) ? undefined : { missing: `${name} (apt-get install ${debianPackage})` };
}

export function toolPath(name: string): string | undefined {
  for (const dir of TOOL_DIRS) {
    try {
      accessSync(`${dir}/${name}`, constants.X_OK);
      return `${dir}/${name}`;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** Loop devices and mounts: root, losetup and mount. */
export function loopDevices(): Requirement | undefined {
  return root() ?? tool('losetup', 'mount') ?? tool('mount', 'mount');
}

/**
 * True when `what` must be skipped because a requirement is unmet (and says so); throws
 * when DHV_REQUIRE_ROOT_TESTS=1. Use as `describe.skipIf(skipUnless('xfs volumes', loopDevices(), tool('mkfs.xfs', 'xfsprogs')))`.
 */
export function skipUnless(what: string, ...requirements: Array<Requirement | undefined>): boolean {
  const unmet = requirements.filter((r): r is Requirement => r !== undefined);
  if (unmet.length === 0) return false;
  const reason = `${what} needs ${unmet.map((r) => r.missing).join(', ')}`;
  if (requireEverything) throw new Error(`DHV_REQUIRE_ROOT_TESTS=1, but this machine cannot run: ${reason}`);
  console.warn(`skipping: ${reason}`);
  const log = process.env.DHV_SKIP_LOG;
  if (log) appendFileSync(log, `${reason}\n`);
  return true;
}

/** Why tests that need root and loop devices cannot run here, or undefined when they can. */
export function rootTestsUnavailable(): string | undefined {
  return loopDevices()?.missing;
}

/**
 * True when tests that need root and loop devices must skip here (and says why); throws
 * under DHV_REQUIRE_ROOT_TESTS=1. Use as `describe.skipIf(skipRootTests('what'))(...)`.
 */
export function skipRootTests(what: string): boolean {
  return skipUnless(what, loopDevices());
}
