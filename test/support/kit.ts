/**
 * The test kit: what every test imports to make a temp dir and leave nothing behind on the
 * host (built on @dhv/sdk/host's cleanup journal, mount table, loop devices and teardown), run the real
 * `dhv`, find a built reference plugin, and say what the machine must have.
 *
 *   tempDir / removeTempDir / releaseMountsAndLoops   temp-dir.ts
 *   runDhv                                            run-dhv.ts
 *   builtPlugin, REPO_ROOT, DHV_BIN, fixtures          checkout-paths.ts
 *   skipUnless(what, root(), tool(...)), skipRootTests requirements.ts
 *   registryCa (for what runs npm install)             registry-env.ts
 *
 * Helpers for one kind of test build on it: dhv-agent.ts (a temporary simulated agent),
 * check-cli.ts (`dhv check`), gates.ts (race tests), mkdir-plugin.ts, loopback-volumes.ts,
 * run-as-dhv.ts (a plugin call through the runner dhv uses, with execPlugin's arguments).
 */
export * from './checkout-paths.js';
export * from './requirements.js';
export * from './run-dhv.js';
export * from './temp-dir.js';
export * from './registry-env.js';
