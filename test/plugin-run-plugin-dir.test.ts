import { afterEach, describe, expect, it } from 'vitest';
import { mkdir, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { tempAgent, type TempAgent } from './support/dhv-agent.js';

/** `dhv plugin run PATH` tells the plugin the plugin dir an agent running it from there would. */

let agent: TempAgent | undefined;
afterEach(async () => {
  await agent?.cleanup();
  agent = undefined;
});

const ENV_PLUGIN = '#!/bin/sh\nprintf \'{"version": "1"}\'\n/usr/bin/env >&2\n';

describe('dhv plugin run PATH', () => {
  it("passes the plugin's own folder as DHV_PLUGIN_DIR when no plugin dir is given, and a given one as given", async () => {
    agent = await tempAgent();
    const folder = join(agent.dir, 'elsewhere');
    await mkdir(folder);
    const plugin = join(folder, 'p');
    await writeFile(plugin, ENV_PLUGIN);
    await chmod(plugin, 0o755);

    const deleted = await agent.json(
      'plugin',
      'run',
      plugin,
      'delete',
      '--volume-id',
      '1e1d4540-14f9-2515-8502-24d46291717d',
    );
    expect(deleted.environment.DHV_PLUGIN_DIR).toBe(folder);

    const given = join(agent.dir, 'given-dir');
    const configured = await agent.json(
      'plugin',
      'run',
      plugin,
      'delete',
      '--volume-id',
      '1e1d4540-14f9-2515-8502-24d46291717d',
      '--plugin-dir',
      given,
    );
    expect(configured.environment.DHV_PLUGIN_DIR).toBe(given);
  });
});
