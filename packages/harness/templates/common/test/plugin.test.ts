import { fileURLToPath } from 'node:url';
import { afterAll, describe, test } from 'vitest';
import { conformanceTests } from '@dhv/harness/testing';

// `npm test` builds first: every check runs the built file exactly as a Nomad agent
// would (empty environment, the agent's timeouts), one vitest test per check.
const plugin = fileURLToPath(new URL('../dist/{{pluginId}}', import.meta.url));
const needsRoot = {{needsRoot}};
const canRun = !needsRoot || process.getuid?.() === 0;

conformanceTests({
  plugin,
  describe: canRun ? describe : describe.skip,
  test,
  afterAll,
  // Parameters or capacities your plugin needs for every create, as `dhv check` takes them:
  // parameters: { mode: '0750' }, capacityMin: '10MiB', capacityMax: '20MiB',
});
