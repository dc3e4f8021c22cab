import { fileURLToPath } from 'node:url';
import { afterAll, describe, test } from 'vitest';
import { conformanceTests } from '@dhv/harness/testing';

// `npm test` builds first: every check runs the built file exactly as a Nomad agent
// would (empty environment, the agent's timeouts), one vitest test per check.
const plugin = fileURLToPath(new URL('../dist/{{pluginId}}', import.meta.url));
const needsRoot = {{needsRoot}};

conformanceTests({
  plugin,
  describe,
  test,
  afterAll,
  // Without root this plugin cannot be judged: one test says so, skipped (failed under DHV_STRICT=1).
  unavailable: needsRoot && process.getuid?.() !== 0 ? 'this plugin needs root (mount, loop devices): run `sudo npm test`' : undefined,
  // DHV_STRICT=1 (what CI should set): a skipped required check fails, as `dhv check --strict` does.
  strict: process.env.DHV_STRICT === '1',
  // Parameters or capacities your plugin needs for every create, as `dhv check` takes them:
  // parameters: { mode: '0750' }, capacityMin: '10MiB', capacityMax: '20MiB',
});
