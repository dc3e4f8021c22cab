import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { readCheckConfig } from './config-file.js';
import { resolveSettings } from './settings.js';
import { useTempDir } from '../../../../test/support/kit.js';

const dir = useTempDir('check-config');

test('a config file declares what the plugin takes and makes: parameters, its smallest volume, its features', async () => {
  const file = join(dir(), 'check.hcl');
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
