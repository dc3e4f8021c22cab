import { loopDevices, skipUnless } from './requirements.js';

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
