import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireVolumeLock } from '@dhv/sdk';
import { lockHolder } from './holder-processes.js';
import { useTempDir } from '../../../../../test/support/kit.js';

describe('lockHolder', () => {
  const dir = useTempDir('holder');

  it('reads the PID a volume lock wrote into its file, so a waiter can see whether its keeper is stopped', async () => {
    const path = join(dir(), 'door.lock');
    const release = await acquireVolumeLock(path);
    try {
      expect(lockHolder(path)).toBe(process.pid);
    } finally {
      await release();
    }
  });

  it('names no one for a file without a holder note', async () => {
    const path = join(dir(), 'other.lock');
    await writeFile(path, '123\n');
    expect(lockHolder(path)).toBeUndefined();
    expect(lockHolder(join(dir(), 'missing.lock'))).toBeUndefined();
  });
});
