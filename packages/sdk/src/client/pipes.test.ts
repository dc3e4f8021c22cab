import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execPlugin } from './exec-plugin.js';
import { PluginDir } from '../__fixtures__/plugins.js';

/** The pipes a plugin writes to carry every byte it writes to the caller, and to nobody else. */

let dir: PluginDir;
beforeEach(async () => {
  dir = await PluginDir.create();
});
afterEach(async () => {
  await dir.cleanup();
});

describe('plugin output through the pipes', () => {
  it('arrives whole and unmixed over 300 runs, 10 at a time', async () => {
    await dir.file(
      'p',
      '#!/bin/sh\nprintf \'{"path": "%s/%s", "bytes": 12345}\' "$DHV_VOLUMES_DIR" "$DHV_VOLUME_ID"\necho noise >&2\n',
      0o755,
    );
    const wrong: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, worker) => {
        for (let i = 0; i < 30; i++) {
          const volumeId = `${worker}-${i}`;
          const run = await execPlugin({ pluginDir: dir.path, pluginId: 'p' }, 'create', {
            volumesDir: '/v',
            volumeName: 'a',
            volumeId,
            nodeId: 'n',
          });
          if (run.path !== `/v/${volumeId}` || run.bytes !== 12345n || run.stderr !== 'noise\n')
            wrong.push(`${volumeId}: ${JSON.stringify([run.stdout, run.stderr])}`);
        }
      }),
    );
    expect(wrong).toEqual([]);
  });
});
