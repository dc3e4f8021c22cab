import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { readCheckConfig } from './config-file.js';
import { resolveSettings } from './settings.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dhv-check-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a config file declares what the plugin takes and makes: parameters, its smallest volume, its features', async () => {
  const file = join(dir, 'check.hcl');
  await writeFile(
    file,
    [
      'parameters { fs = "xfs" }',
      'capacity_floor = "300MiB"',
      'capacity_max = "1GiB"',
      'supports = ["expansion"]',
    ].join('\n'),
  );
  const settings = resolveSettings(await readCheckConfig(file));
  expect(settings).toMatchObject({
    parameters: { fs: 'xfs' },
    capacityFloor: 300n * 1024n * 1024n,
    supports: ['expansion'],
  });
});
